"""The link: bytes from a board to typed messages and back.

wire (frames, CRC, MAC) -> messages (Hello, Event, Beat, Led, ...) -> inbox (exactly once, in order)
-> transport (serial ports, MQTT). Knows no table and no game.
"""
