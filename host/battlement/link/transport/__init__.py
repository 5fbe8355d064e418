"""Host transports: serial ports and MQTT, one consumer API (see transport.base.Transport).

    t = SerialTransport(["/dev/ttyACM0"])   # or MqttTransport("mqtt://host:1883", table="hall-1")
    await t.start()
    msg = await t.get()                      # Hello | Event | Beat | Reply
    msgid = await t.send(Led("tower-1", "ring", "blink", 0xFF0000, 500))
    t.counters, t.boards[("hall-1", "tower-1")], t.online   # by (table, board); table None on serial
    await t.stop()
"""

from battlement.link.transport.base import BadCommand, NoRoute, Transport
from battlement.link.transport.mqtt import MqttTransport
from battlement.link.transport.serialport import SerialTransport

__all__ = ["BadCommand", "MqttTransport", "NoRoute", "SerialTransport", "Transport"]
