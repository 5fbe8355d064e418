"""Tests of the boards: pin maps, wiring, board health, kits (host/battlement/boards/)."""
