from brainiac.cli import main

main()
