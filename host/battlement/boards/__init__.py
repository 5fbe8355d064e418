"""The boards: pin maps and profiles, wiring diagrams, flashing, broker logins and board health."""
