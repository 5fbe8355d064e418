"""The sound of announcements already said: espeak-ng's WAV for (voice, speed, text), kept on disk.

A table repeats itself ("Red, your turn.", "Blue's kingdom is ready."), and espeak-ng's own start and
synthesis is what delays the first audio (P7 in docs/bridge.md); a phrase said before starts as soon as
`play` opens its file. Volume is not part of the key: it is applied when playing.
Bounded twice (entries and bytes), least recently used goes first. Each entry remembers its length and
CRC-32, so a file that was cut short, overwritten or removed is made again rather than played wrong.
The folder is a temporary one the cache owns, removed when the Sound closes (or the process ends).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
import zlib
from collections import OrderedDict

ENTRIES = 200
BYTES = 8 * 1024 * 1024  # ~2 minutes of espeak-ng's 22 kHz mono voice


def finish_wav(data: bytes) -> bytes | None:
    """espeak-ng streams a WAV whose header sizes are unknown placeholders: write the real ones.
    None when the bytes are no PCM WAV espeak-ng would make (then nothing is kept)."""
    if len(data) <= 44 or data[:4] != b"RIFF" or data[8:12] != b"WAVE" or data[36:40] != b"data":
        return None
    out = bytearray(data)
    out[4:8] = (len(data) - 8).to_bytes(4, "little")
    out[40:44] = (len(data) - 44).to_bytes(4, "little")
    return bytes(out)


class SpeechCache:
    def __init__(self, entries: int = ENTRIES, max_bytes: int = BYTES):
        self.entries, self.max_bytes = max(0, entries), max(0, max_bytes)
        self.folder = ""
        self._index: OrderedDict[tuple, tuple[str, int, int]] = OrderedDict()  # key -> (file, length, crc)
        self.size = 0
        self.hits = self.misses = self.damaged = 0
        self._made = 0  # file names are numbers: never one a damaged or forgotten entry still has
        self._lock = threading.Lock()
        self._cleanup: weakref.finalize | None = None

    def __len__(self) -> int:
        return len(self._index)

    def path(self, key: tuple) -> str:
        entry = self._index.get(key)
        return entry[0] if entry else ""

    def get(self, key: tuple) -> str:
        """The file to play for key, or "" (a miss). A damaged file counts as a miss and is forgotten."""
        with self._lock:
            entry = self._index.get(key)
            if entry is None:
                self.misses += 1
                return ""
            path, length, crc = entry
            try:
                with open(path, "rb") as f:
                    data = f.read(length + 1)
            except OSError:
                data = b""
            if len(data) != length or zlib.crc32(data) != crc:
                self._forget(key)
                self.damaged += 1
                self.misses += 1
                return ""
            self._index.move_to_end(key)
            self.hits += 1
            return path

    def put(self, key: tuple, wav: bytes) -> None:
        data = finish_wav(wav)
        if data is None or len(data) > self.max_bytes or not self.entries:
            return
        with self._lock:
            if not self.folder:
                self.folder = tempfile.mkdtemp(prefix="battlement-speech-")
                self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)
            if key in self._index:
                self._forget(key)
            while self._index and (len(self._index) >= self.entries or self.size + len(data) > self.max_bytes):
                self._forget(next(iter(self._index)))
            self._made += 1
            path = os.path.join(self.folder, "%06d.wav" % self._made)
            try:
                with open(path, "wb") as f:
                    f.write(data)
            except OSError:
                return  # a full disk costs the cache, never the announcement
            self._index[key] = (path, len(data), zlib.crc32(data))
            self.size += len(data)

    def drop(self, key: tuple) -> None:
        with self._lock:
            if key in self._index:
                self._forget(key)

    def _forget(self, key: tuple) -> None:
        path, length, _crc = self._index.pop(key)
        self.size -= length
        try:
            os.remove(path)
        except OSError:
            pass

    def clear(self) -> None:
        """Forget every phrase (the folder stays for what comes next)."""
        with self._lock:
            for key in list(self._index):
                self._forget(key)

    def close(self) -> None:
        with self._lock:
            self._index.clear()
            self.size = 0
            if self._cleanup:
                self._cleanup()
