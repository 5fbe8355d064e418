# Board entry point: MicroPython runs main.py after boot.py at every reset.
import app

app.main()
