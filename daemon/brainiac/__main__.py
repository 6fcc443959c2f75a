from brainiac.interfaces.entry import main

main()
