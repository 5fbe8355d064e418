"""Operations: metrics, logs, the task supervisor, Home Assistant and the systemd service."""
