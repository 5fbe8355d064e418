"""The bridge's web page: public scoreboard, host controls, private side pages (Starlette + websockets)."""
