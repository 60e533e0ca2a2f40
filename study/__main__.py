from study.cli import main

main()
