// The host page's speech card: mute, volume, and what went wrong with the sound, in words.
// The bridge's sound is the room's (one speaker for every table); page.js hands over each message.
(function () {
  "use strict";
  if (document.body.dataset.role !== "host") return;
  const hooks = (window.BATTLEMENT_HOOKS = window.BATTLEMENT_HOOKS || []);
  const MODES = { speaker: "on the speaker", file: "written as WAV files", null: "off (no speaker)" };

  const card = document.createElement("section");
  card.id = "sound-card";
  card.className = "card";
  card.innerHTML = '<h2>Speech</h2>' +
    '<div class="row"><label><input type="checkbox" id="sound-mute"> Mute</label> ' +
    '<label>Volume <input type="range" id="sound-volume" min="0" max="200" step="10" aria-label="volume"></label> ' +
    '<span id="sound-volume-value" class="small"></span></div>' +
    '<div id="sound-state" class="small" role="status"></div>' +
    '<div id="sound-problem" class="warning" role="alert"></div>' +
    '<div id="sound-counts" class="small"></div>';
  const controls = document.getElementById("controls");
  controls.parentNode.insertBefore(card, controls.nextSibling);
  const $ = (id) => document.getElementById(id);
  const send = (msg) => window.BATTLEMENT_SEND && window.BATTLEMENT_SEND(msg);

  $("sound-mute").onchange = (e) => send({ action: "sound", muted: e.target.checked });
  $("sound-volume").oninput = (e) => { $("sound-volume-value").textContent = e.target.value; };
  $("sound-volume").onchange = (e) => send({ action: "sound", volume: parseInt(e.target.value, 10) });

  hooks.push((m) => {
    if (m.type !== "state" || !m.sound) return;
    const s = m.sound, c = m.counters || {};
    $("sound-mute").checked = s.muted;
    if (document.activeElement !== $("sound-volume")) $("sound-volume").value = s.volume;
    $("sound-volume-value").textContent = s.volume;
    $("sound-state").textContent = "Announcements " + (MODES[s.mode] || s.mode) + (s.muted ? ", muted" : "") +
      (s.waiting ? "; " + s.waiting + " waiting" : "");
    $("sound-problem").textContent = s.problem ? "Sound problem: " + s.problem : "";
    $("sound-counts").textContent = ["said", "tones", "failed", "muted", "replaced", "stale", "dropped", "silent"]
      .filter((k) => c["sound." + k]).map((k) => k + " " + c["sound." + k]).join(" | ");
  });
})();
