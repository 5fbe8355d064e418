"""Logging stand-ins for espeak-ng and sox's `play`: real child processes on PATH that take the time a
voice takes and write down when each one started and ended (tests of the speech queue, and P7).

STANDIN_LOG     file the stand-ins append JSON lines to: {"prog", "text", "start", "end"} (time.time())
STANDIN_SECONDS how long an announcement lasts (default 0.15 s; a tone lasts its own length)
STANDIN_NODEVICE=1  `play` fails as sox does on a machine with no sound card
STANDIN_FIRST_BYTES  bytes `play` waits for before it counts as playing (default 4)
The espeak-ng stand-in writes a WAV header (sizes unknown, as espeak-ng streams) and then the text itself
as its "samples"; `play` logs what it heard (the bytes after the header), from its stdin or from a file.
"""

import json
import os
import pathlib
import sys

ESPEAK = r'''
import json, os, sys, time
start = time.time()
args = sys.argv[1:]
text = args[args.index("--") + 1] if "--" in args else (args[-1] if args else "")
out = args[args.index("-w") + 1] if "-w" in args else None
# a WAV header first, as espeak-ng writes it before the voice (sizes not known yet): the player starts on it
header = (b"RIFF\xff\xff\xff\x7fWAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x22\x56\x00\x00"
          b"\x44\xac\x00\x00\x02\x00\x10\x00data\xff\xff\xff\x7f")
voice = text.encode("utf-8") + (b" " if len(text.encode("utf-8")) % 2 else b"")
if "--stdout" in args:
    sys.stdout.buffer.write(header)
    sys.stdout.flush()
time.sleep(float(os.environ.get("STANDIN_SECONDS", "0.15")))
if "--stdout" in args:
    sys.stdout.buffer.write(voice)
    sys.stdout.flush()
if out:
    open(out, "wb").write(b"RIFF")
with open(os.environ["STANDIN_LOG"], "a") as f:
    f.write(json.dumps({"prog": "espeak-ng", "text": text, "start": start, "end": time.time()}) + "\n")
'''

PLAY = r'''
import json, os, sys, time
start = time.time()
args = sys.argv[1:]
first = None
heard = None
if "-n" in args:
    first = time.time()  # a tone sounds from the start
    time.sleep(float(args[args.index("synth") + 1]))
else:
    # the first bytes of audio (after the WAV header when STANDIN_FIRST_BYTES says so): playing starts here
    files = [a for a in args if a.endswith(".wav")]
    src = open(files[0], "rb") if files else sys.stdin.buffer
    data = src.read(int(os.environ.get("STANDIN_FIRST_BYTES", "4")))
    first = time.time()
    while True:
        more = src.read(4096)
        if not more:
            break
        data += more
    heard = data[44:].decode("utf-8", "replace").strip()
if os.environ.get("STANDIN_NODEVICE") == "1":
    sys.stderr.write("ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM default\n"
                     "play FAIL sox: Sorry, there is no default audio device configured\n")
    sys.exit(1)
with open(os.environ["STANDIN_LOG"], "a") as f:
    f.write(json.dumps({"prog": "play", "args": args, "start": start, "first": first, "end": time.time(),
                        "heard": heard if "-n" not in args else None}) + "\n")
'''


def install(folder, programs=("espeak-ng", "play", "sox")):
    """Write the stand-ins into folder/bin; returns that folder (put it first on PATH)."""
    bin_dir = pathlib.Path(folder) / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in programs:
        body = ESPEAK if name == "espeak-ng" else PLAY
        p = bin_dir / name
        p.write_text("#!%s -S\n%s" % (sys.executable, body))  # -S: no site, starts in half the time
        p.chmod(0o755)
    return bin_dir


def records(log):
    path = pathlib.Path(log)
    if not path.exists():
        return []
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def environ(folder, log, programs=("espeak-ng", "play", "sox"), **extra):
    """The environment for a process that should use the stand-ins. Without "espeak-ng" in programs, PATH
    holds only the stand-ins, so espeak-ng is not installed as far as the process can tell."""
    env = dict(os.environ)
    bin_dir = str(install(folder, programs))
    env["PATH"] = bin_dir + (os.pathsep + os.environ.get("PATH", "") if "espeak-ng" in programs else "")
    env["STANDIN_LOG"] = str(log)
    env.update({k: str(v) for k, v in extra.items()})
    return env
