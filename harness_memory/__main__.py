from .cli_server import main

main()
