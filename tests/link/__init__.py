"""Tests of the link: wire codec, inbox, serial and MQTT transports (host/battlement/link/)."""
