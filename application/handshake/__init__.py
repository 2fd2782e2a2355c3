"""What `initialize` answers: the server's description (server_info.py, light: read
before the rest loads) and the use case (initialize.py)."""
