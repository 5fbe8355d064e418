"""Tests of metrics, logs, supervision, Home Assistant, the broker config (host/battlement/ops/)."""
