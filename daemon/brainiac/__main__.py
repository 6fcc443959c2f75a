from brainiac.entry import main

main()
