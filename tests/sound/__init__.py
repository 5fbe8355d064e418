"""Tests of speech and tones (host/battlement/sound/)."""
