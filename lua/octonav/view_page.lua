-- luacheck: no max line length
-- The viewer's page (octonav.view fills in @TITLE@ and @DATA@). Plain WebGL2, written for octonav:
-- blocked space as one mesh of merged faces, boxes as instances of one wire cube, lines and points as
-- they are, spheres (a crowd's agents) as instances of one lit ball; orbit (drag), pan (shift-drag or
-- right-drag), zoom (wheel), layer toggles, a slice plane. A crowd recording (D.rec) plays over a
-- timeline: its records stay one buffer and each frame points the instanced attributes at its own.
-- Faces are drawn from their free side only, so a closed map is seen from inside (walls facing away vanish).
return [==[<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>@TITLE@</title>
<style>
html,body{margin:0;height:100%;overflow:hidden;background:#15171c;color:#ddd;font:13px sans-serif}
canvas{display:block;width:100%;height:100%}
#ui{position:absolute;top:8px;left:8px;background:rgba(20,22,28,.85);padding:8px 10px;border-radius:6px}
#ui label{display:block;white-space:nowrap}
#ui .sw{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
#stats{margin-top:6px;color:#aaa}
#result{display:none}
#player{display:none;position:absolute;left:8px;right:8px;bottom:8px;background:rgba(20,22,28,.85);padding:6px 10px;border-radius:6px;white-space:nowrap}
#timeline{width:55%;vertical-align:middle}
#fatal{display:none;position:absolute;top:40%;left:10%;right:10%;padding:14px 18px;background:#5a1d1d;color:#fff;border:1px solid #c55;border-radius:6px;font:15px sans-serif;white-space:pre-wrap}
</style></head><body>
<canvas id="c"></canvas>
<div id="ui"><b>@TITLE@</b><div id="layers"></div>
<label>slice y <input id="slice" type="range" min="0" max="1000" value="1000"></label>
<div id="stats"></div><div style="color:#888">drag: orbit, shift/right-drag: pan, wheel: zoom</div></div>
<div id="player"><button id="play">play</button> speed <select id="speed"><option>0.25</option><option>0.5</option>
<option selected>1</option><option>2</option><option>4</option></select>
<input id="timeline" type="range" min="0" max="0" value="0"> <span id="fno"></span></div>
<pre id="result">pending</pre>
<div id="fatal"></div>
<script>
"use strict";
// what keeps the page from drawing is shown on it, not only in the console
function fatal(msg) {
  const f = document.getElementById("fatal");
  f.textContent = msg;
  f.style.display = "block";
}
window.addEventListener("error", function (e) {
  if (document.getElementById("fatal").style.display !== "block") fatal("The viewer stopped: " + e.message);
});
const D = @DATA@;
function f32(b64) {
  const s = atob(b64), u = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
  return new Float32Array(u.buffer);
}
const canvas = document.getElementById("c");
const gl = canvas.getContext("webgl2", { antialias: false, preserveDrawingBuffer: true });
const result = document.getElementById("result");
if (!gl) {
  result.textContent = '{"error":"no webgl2"}';
  fatal("WebGL2 is not available in this browser, so the nav data cannot be drawn.\n" +
    "Turn on hardware acceleration (or WebGL) in the browser's settings, or use a browser with WebGL2. " +
    "Chromium without a GPU draws it in software: chromium --use-angle=swiftshader --enable-unsafe-swiftshader FILE.html. " +
    "Or make a PNG instead: octonav view INPUT --png FILE.png");
  throw new Error("WebGL2 is not available");
}

function shader(type, src) {
  const s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
  return s;
}
function program(vs, fs) {
  const p = gl.createProgram();
  gl.attachShader(p, shader(gl.VERTEX_SHADER, vs)); gl.attachShader(p, shader(gl.FRAGMENT_SHADER, fs));
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
  return p;
}
const HEAD = "#version 300 es\nprecision highp float;\n";
// blocked surface: position, normal; lit by a fixed light; clipped above the slice
const meshProg = program(HEAD + `
uniform mat4 mvp; in vec3 pos; in vec3 nrm; out vec3 vn; out float vy;
void main(){ vn = nrm; vy = pos.y; gl_Position = mvp * vec4(pos, 1.0); }`, HEAD + `
uniform vec3 color; uniform float slice; in vec3 vn; in float vy; out vec4 o;
void main(){ if (vy > slice) discard;
  float l = 0.55 + 0.45 * max(dot(normalize(vn), normalize(vec3(0.35, 0.85, 0.45))), 0.0) + 0.1 * abs(vn.x);
  o = vec4(color * min(l, 1.0), 1.0); }`);
// lines and wire boxes: a unit cube's 12 edges instanced per box (min, max, kind) or one segment per line
const lineProg = program(HEAD + `
uniform mat4 mvp; uniform vec2 offset; uniform vec3 pal[32];
in vec3 unit; in vec3 bmin; in vec3 bmax; in float kind; out vec3 col; out float vy;
void main(){ vec3 p = mix(bmin, bmax, unit); vy = p.y; col = pal[int(kind)];
  vec4 c = mvp * vec4(p, 1.0); gl_Position = c + vec4(offset * c.w, 0.0, 0.0); }`, HEAD + `
uniform float slice; uniform float clip; in vec3 col; in float vy; out vec4 o;
void main(){ if (clip > 0.5 && vy > slice) discard; o = vec4(col, 1.0); }`);
const pointProg = program(HEAD + `
uniform mat4 mvp; uniform vec3 pal[32]; uniform float psize; in vec3 pos; in float kind; out vec3 col;
void main(){ col = pal[int(kind)]; gl_Position = mvp * vec4(pos, 1.0); gl_PointSize = psize; }`, HEAD + `
in vec3 col; out vec4 o; void main(){ o = vec4(col, 1.0); }`);

// spheres (agents): a unit ball instanced per centre and radius, lit from the eye so its middle shows
// the kind's colour as it is
const sphereProg = program(HEAD + `
uniform mat4 mvp; in vec3 unit; in vec3 ctr; in float rad; out vec3 vn;
void main(){ vn = unit; gl_Position = mvp * vec4(ctr + rad * unit, 1.0); }`, HEAD + `
uniform vec3 color; uniform vec3 eye; in vec3 vn; out vec4 o;
void main(){ o = vec4(color * (0.45 + 0.55 * max(dot(normalize(vn), eye), 0.0)), 1.0); }`);
// a recording's velocity lines: from each agent's centre to where it is vscale seconds later
const velProg = program(HEAD + `
uniform mat4 mvp; uniform vec2 offset; uniform float vscale; in vec3 unit; in vec3 ctr; in vec3 vel;
void main(){ vec4 c = mvp * vec4(ctr + unit.x * vscale * vel, 1.0); gl_Position = c + vec4(offset * c.w, 0.0, 0.0); }`, HEAD + `
uniform vec3 color; out vec4 o; void main(){ o = vec4(color, 1.0); }`);

const kinds = D.kinds, palette = D.palette, K = {};
kinds.forEach((k, i) => K[k] = i);
const palFlat = new Float32Array(96); palette.forEach((c, i) => palFlat.set(c, 3 * i));

// the surface mesh: two triangles a quad
const Q = f32(D.quads), nq = D.nquads;
const NRM = [[-1,0,0],[1,0,0],[0,-1,0],[0,1,0],[0,0,-1],[0,0,1]];
const meshPos = new Float32Array(nq * 18), meshNrm = new Float32Array(nq * 18);
for (let q = 0; q < nq; q++) {
  const b = q * 13, n = NRM[Q[b + 12] | 0], order = [0, 1, 2, 0, 2, 3];
  for (let j = 0; j < 6; j++) {
    const c = order[j];
    meshPos.set([Q[b + 3 * c], Q[b + 3 * c + 1], Q[b + 3 * c + 2]], q * 18 + 3 * j);
    meshNrm.set(n, q * 18 + 3 * j);
  }
}
function buffer(data) { const b = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, b); gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW); return b; }
function attrib(prog, name, buf, size, stride, offset, divisor) {
  const loc = gl.getAttribLocation(prog, name);
  if (loc < 0) return;
  gl.bindBuffer(gl.ARRAY_BUFFER, buf); gl.enableVertexAttribArray(loc);
  gl.vertexAttribPointer(loc, size, gl.FLOAT, false, stride, offset); gl.vertexAttribDivisor(loc, divisor);
}
const meshVao = gl.createVertexArray(); gl.bindVertexArray(meshVao);
attrib(meshProg, "pos", buffer(meshPos), 3, 0, 0, 0); attrib(meshProg, "nrm", buffer(meshNrm), 3, 0, 0, 0);

// group boxes, lines and points by kind so each layer toggles on its own
function byKind(arr, n, stride) {
  const groups = {};
  for (let i = 0; i < n; i++) { const k = arr[i * stride + stride - 1]; (groups[k] = groups[k] || []).push(i); }
  const out = {};
  for (const k in groups) {
    const idx = groups[k], a = new Float32Array(idx.length * stride);
    idx.forEach((i, j) => a.set(arr.subarray(i * stride, i * stride + stride), j * stride));
    out[k] = { data: a, n: idx.length };
  }
  return out;
}
const cubeEdges = new Float32Array([0,0,0,1,0,0, 0,1,0,1,1,0, 0,0,1,1,0,1, 0,1,1,1,1,1, 0,0,0,0,1,0, 1,0,0,1,1,0,
  0,0,1,0,1,1, 1,0,1,1,1,1, 0,0,0,0,0,1, 1,0,0,1,0,1, 0,1,0,0,1,1, 1,1,0,1,1,1]);
const segUnit = new Float32Array([0,0,0, 1,1,1]);
const cubeBuf = buffer(cubeEdges), segBuf = buffer(segUnit);
function instVao(unitBuf, data) {
  const vao = gl.createVertexArray(); gl.bindVertexArray(vao);
  const b = buffer(data);
  attrib(lineProg, "unit", unitBuf, 3, 0, 0, 0);
  attrib(lineProg, "bmin", b, 3, 28, 0, 1); attrib(lineProg, "bmax", b, 3, 28, 12, 1); attrib(lineProg, "kind", b, 1, 28, 24, 1);
  return vao;
}
const layers = {};   // kind -> { boxes, lines, points, on }
function layer(k) { return layers[k] = layers[k] || { on: true }; }
const boxGroups = byKind(f32(D.boxes), D.nboxes, 7);
for (const k in boxGroups) { const L = layer(kinds[k]); L.boxVao = instVao(cubeBuf, boxGroups[k].data); L.nbox = boxGroups[k].n; }
const lineGroups = byKind(f32(D.lines), D.nlines, 7);
for (const k in lineGroups) { const L = layer(kinds[k]); L.lineVao = instVao(segBuf, lineGroups[k].data); L.nline = lineGroups[k].n; }
const pointGroups = byKind(f32(D.points), D.npoints, 4);
for (const k in pointGroups) {
  const L = layer(kinds[k]), vao = gl.createVertexArray(); gl.bindVertexArray(vao);
  const b = buffer(pointGroups[k].data);
  attrib(pointProg, "pos", b, 3, 16, 0, 0); attrib(pointProg, "kind", b, 1, 16, 12, 0);
  L.pointVao = vao; L.npoint = pointGroups[k].n;
}
function sphereMesh(nl, nm) {
  const v = [], P = (t, p) => [Math.sin(t) * Math.cos(p), Math.cos(t), Math.sin(t) * Math.sin(p)];
  for (let i = 0; i < nl; i++) for (let j = 0; j < nm; j++) {
    const t0 = Math.PI * i / nl, t1 = Math.PI * (i + 1) / nl, p0 = 2 * Math.PI * j / nm, p1 = 2 * Math.PI * (j + 1) / nm;
    const a = P(t0, p0), b = P(t1, p0), c = P(t1, p1), d = P(t0, p1);
    v.push(...a, ...b, ...c, ...a, ...c, ...d);
  }
  return new Float32Array(v);
}
const ballBuf = buffer(sphereMesh(12, 20)), ballVerts = 12 * 20 * 6;
const sphereGroups = byKind(f32(D.spheres), D.nspheres, 5);
for (const k in sphereGroups) {
  const L = layer(kinds[k]), vao = gl.createVertexArray(); gl.bindVertexArray(vao);
  const b = buffer(sphereGroups[k].data);
  attrib(sphereProg, "unit", ballBuf, 3, 0, 0, 0);
  attrib(sphereProg, "ctr", b, 3, 20, 0, 1); attrib(sphereProg, "rad", b, 1, 20, 12, 1);
  L.sphereVao = vao; L.nsphere = sphereGroups[k].n;
}
// the recording: every frame's records in one buffer (8 words a record: id, x y z, vx vy vz, r)
const R = D.rec, nf = R ? R.frames.length : 0;
let fi = 0, recBuf = null, recVao = null, velVao = null;
if (R) {
  recBuf = buffer(f32(R.data));
  recVao = gl.createVertexArray(); velVao = gl.createVertexArray();
  layer("agent"); layer("velocity");
}
// point the instanced attributes at frame i's records
function bindFrame(i) {
  const first = R.frames[i][1] * 32;
  gl.bindVertexArray(recVao);
  attrib(sphereProg, "unit", ballBuf, 3, 0, 0, 0);
  attrib(sphereProg, "ctr", recBuf, 3, 32, first + 4, 1); attrib(sphereProg, "rad", recBuf, 1, 32, first + 28, 1);
  gl.bindVertexArray(velVao);
  attrib(velProg, "unit", segBuf, 3, 0, 0, 0);
  attrib(velProg, "ctr", recBuf, 3, 32, first + 4, 1); attrib(velProg, "vel", recBuf, 3, 32, first + 16, 1);
}
if (nq > 0) layer("surface");
if (layers.free) layers.free.on = nq == 0;   // free cells start hidden when there is a surface to see
if (layers.portal) layers.portal.on = false; // portals crowd a world's picture: shown on request

// layer toggles
const ui = document.getElementById("layers");
Object.keys(layers).sort().forEach(k => {
  const c = palette[K[k]], lab = document.createElement("label"), box = document.createElement("input");
  box.type = "checkbox"; box.checked = layers[k].on; box.onchange = () => { layers[k].on = box.checked; draw(); };
  const sw = document.createElement("span"); sw.className = "sw";
  sw.style.background = "rgb(" + c.map(v => Math.round(v * 255)).join(",") + ")";
  lab.appendChild(box); lab.appendChild(sw); lab.appendChild(document.createTextNode(k)); ui.appendChild(lab);
});

// camera: orbit around the centre of what is shown
const lo = D.lo, hi = D.hi, centre = [0, 1, 2].map(a => (lo[a] + hi[a]) / 2);
const radius = Math.max(1e-6, Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) / 2);
const cam = { yaw: 0.75, pitch: 0.6, dist: radius * 2.6, target: centre.slice() };
function mul(a, b) { const o = new Float32Array(16);
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) { let s = 0; for (let k = 0; k < 4; k++) s += a[k * 4 + j] * b[i * 4 + k]; o[i * 4 + j] = s; }
  return o; }
function matrices() {
  const w = canvas.width, h = canvas.height, f = 1 / Math.tan(0.45), near = radius * 0.01, far = radius * 20 + cam.dist;
  const proj = new Float32Array([f * h / w, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) / (near - far), -1, 0, 0, 2 * far * near / (near - far), 0]);
  const cp = Math.cos(cam.pitch), eye = [cam.target[0] + cam.dist * cp * Math.sin(cam.yaw), cam.target[1] + cam.dist * Math.sin(cam.pitch),
    cam.target[2] + cam.dist * cp * Math.cos(cam.yaw)];
  const z = [0, 1, 2].map(a => eye[a] - cam.target[a]), zl = Math.hypot(...z); z.forEach((v, i) => z[i] = v / zl);
  let x = [z[2], 0, -z[0]]; const xl = Math.hypot(...x) || 1; x = x.map(v => v / xl);
  const y = [z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]];
  const view = new Float32Array([x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
    -(x[0] * eye[0] + x[1] * eye[1] + x[2] * eye[2]), -(y[0] * eye[0] + y[1] * eye[1] + y[2] * eye[2]), -(z[0] * eye[0] + z[1] * eye[1] + z[2] * eye[2]), 1]);
  return { mvp: mul(proj, view), x, y, z };
}
const slice = document.getElementById("slice");
function sliceY() { return lo[1] + (hi[1] - lo[1]) * slice.value / 1000 + 1e-4 * radius; }
slice.oninput = () => draw();
function resize() {
  const r = window.devicePixelRatio || 1, w = Math.max(1, Math.round(canvas.clientWidth * r)), h = Math.max(1, Math.round(canvas.clientHeight * r));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
}
let current;
function draw() {
  resize();
  const m = matrices(); current = m;
  gl.viewport(0, 0, canvas.width, canvas.height);
  gl.clearColor(D.bg[0], D.bg[1], D.bg[2], 1); gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  gl.enable(gl.DEPTH_TEST);
  const sy = sliceY();
  if (nq > 0 && layers.surface.on) {
    gl.useProgram(meshProg); gl.bindVertexArray(meshVao);
    gl.uniformMatrix4fv(gl.getUniformLocation(meshProg, "mvp"), false, m.mvp);
    gl.uniform3fv(gl.getUniformLocation(meshProg, "color"), palette[K.surface]);
    gl.uniform1f(gl.getUniformLocation(meshProg, "slice"), sy);
    // faces are wound counter-clockwise from the free side: culling the others shows the world as seen
    // from where agents are, so walls between the camera and the inside of a closed map vanish
    gl.enable(gl.CULL_FACE); gl.frontFace(gl.CCW); gl.cullFace(gl.BACK);
    gl.drawArrays(gl.TRIANGLES, 0, nq * 6);
    gl.disable(gl.CULL_FACE);
  }
  gl.useProgram(lineProg);
  gl.uniformMatrix4fv(gl.getUniformLocation(lineProg, "mvp"), false, m.mvp);
  gl.uniform3fv(gl.getUniformLocation(lineProg, "pal"), palFlat);
  gl.uniform1f(gl.getUniformLocation(lineProg, "slice"), sy);
  const off = gl.getUniformLocation(lineProg, "offset"), clip = gl.getUniformLocation(lineProg, "clip");
  for (const k in layers) {           // cells and bounds: depth-tested, clipped by the slice
    const L = layers[k]; if (!L.on || !L.boxVao) continue;
    gl.uniform1f(clip, 1); gl.uniform2f(off, 0, 0); gl.bindVertexArray(L.boxVao);
    gl.drawArraysInstanced(gl.LINES, 0, 24, L.nbox);
  }
  // agents: lit balls, depth-tested; a recording's velocity lines three pixels wide, depth-tested
  // (the part inside its ball hidden)
  gl.useProgram(sphereProg);
  gl.uniformMatrix4fv(gl.getUniformLocation(sphereProg, "mvp"), false, m.mvp);
  gl.uniform3fv(gl.getUniformLocation(sphereProg, "eye"), m.z);
  const scol = gl.getUniformLocation(sphereProg, "color");
  for (const k in layers) {
    const L = layers[k]; if (!L.on || !L.sphereVao) continue;
    gl.uniform3fv(scol, palette[K[k]]); gl.bindVertexArray(L.sphereVao);
    gl.drawArraysInstanced(gl.TRIANGLES, 0, ballVerts, L.nsphere);
  }
  const pxo = [[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]];
  if (R && nf > 0) {
    const n = R.frames[fi][2];
    if (layers.agent.on && n > 0) {
      gl.uniform3fv(scol, palette[K.agent]); gl.bindVertexArray(recVao);
      gl.drawArraysInstanced(gl.TRIANGLES, 0, ballVerts, n);
    }
    if (layers.velocity.on && n > 0) {
      gl.useProgram(velProg);
      gl.uniformMatrix4fv(gl.getUniformLocation(velProg, "mvp"), false, m.mvp);
      gl.uniform3fv(gl.getUniformLocation(velProg, "color"), palette[K.velocity]);
      gl.uniform1f(gl.getUniformLocation(velProg, "vscale"), R.vscale);
      const voff = gl.getUniformLocation(velProg, "offset");
      gl.bindVertexArray(velVao);
      for (const p of pxo) { gl.uniform2f(voff, 2 * p[0] / canvas.width, 2 * p[1] / canvas.height); gl.drawArraysInstanced(gl.LINES, 0, 2, n); }
    }
  }
  gl.useProgram(lineProg);
  gl.disable(gl.DEPTH_TEST);          // paths, routes, doors on top, three pixels wide
  const px = [[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]];
  for (const k in layers) {
    const L = layers[k]; if (!L.on || !L.lineVao) continue;
    gl.uniform1f(clip, 0); gl.bindVertexArray(L.lineVao);
    for (const p of px) { gl.uniform2f(off, 2 * p[0] / canvas.width, 2 * p[1] / canvas.height); gl.drawArraysInstanced(gl.LINES, 0, 2, L.nline); }
  }
  gl.useProgram(pointProg);
  gl.uniformMatrix4fv(gl.getUniformLocation(pointProg, "mvp"), false, m.mvp);
  gl.uniform3fv(gl.getUniformLocation(pointProg, "pal"), palFlat);
  gl.uniform1f(gl.getUniformLocation(pointProg, "psize"), 7 * (window.devicePixelRatio || 1));
  for (const k in layers) { const L = layers[k]; if (!L.on || !L.pointVao) continue; gl.bindVertexArray(L.pointVao); gl.drawArrays(gl.POINTS, 0, L.npoint); }
  document.getElementById("stats").textContent = nq + " faces, " + D.nboxes + " boxes, " + D.nlines + " lines" +
    (D.nspheres ? ", " + D.nspheres + " spheres" : "") + (R && nf ? ", " + R.frames[fi][2] + " agents" : "");
}
// orbit, pan, zoom
let drag = null;
canvas.addEventListener("contextmenu", e => e.preventDefault());
canvas.addEventListener("mousedown", e => { drag = { x: e.clientX, y: e.clientY, pan: e.shiftKey || e.button === 2 }; });
window.addEventListener("mouseup", () => drag = null);
window.addEventListener("mousemove", e => {
  if (!drag) return;
  const dx = e.clientX - drag.x, dy = e.clientY - drag.y; drag.x = e.clientX; drag.y = e.clientY;
  if (drag.pan) { const s = cam.dist * 0.0015; for (let a = 0; a < 3; a++) cam.target[a] += -dx * s * current.x[a] + dy * s * current.y[a]; }
  else { cam.yaw -= dx * 0.008; cam.pitch = Math.max(-1.55, Math.min(1.55, cam.pitch + dy * 0.008)); }
  draw();
});
canvas.addEventListener("wheel", e => { e.preventDefault(); cam.dist *= Math.exp(e.deltaY * 0.001); draw(); }, { passive: false });
window.addEventListener("resize", draw);

// the player: a timeline over the recording's frames, play/pause, speed, the frame number
const testMode = location.hash === "#test";
let playing = false, speed = 1, last = null, acc = 0;
const play = document.getElementById("play"), timeline = document.getElementById("timeline"), fno = document.getElementById("fno");
function showFrame(i) {
  fi = Math.max(0, Math.min(nf - 1, i));
  bindFrame(fi);
  timeline.value = fi;
  fno.textContent = "frame " + R.frames[fi][0] + " (" + (fi + 1) + "/" + nf + ")";
  play.textContent = playing ? "pause" : "play";
}
function tick(t) {
  if (!playing) { last = null; return; }
  if (last !== null) {
    acc += (t - last) / 1000 * speed / (R.dt * R.every);
    const k = Math.floor(acc);
    if (k > 0) {
      acc -= k;
      if (fi + k >= nf - 1) playing = false;
      showFrame(fi + k); draw();
    }
  }
  last = t;
  requestAnimationFrame(tick);
}
function setPlaying(on) {
  playing = on && nf > 1; acc = 0; last = null;
  if (playing && fi >= nf - 1) fi = 0;
  showFrame(fi); draw();
  if (playing) requestAnimationFrame(tick);
}
if (R && nf > 0) {
  document.getElementById("player").style.display = "block";
  timeline.max = nf - 1;
  timeline.oninput = () => { playing = false; showFrame(+timeline.value); draw(); };
  play.onclick = () => setPlaying(!playing);
  document.getElementById("speed").onchange = e => { speed = +e.target.value; };
  const hf = location.hash.match(/^#frame=(\d+)$/), start = hf ? +hf[1] : D.frame;
  showFrame(start > 0 ? start - 1 : 0);
  draw();
  if (!(start > 0) && !testMode) setPlaying(true);
} else draw();

// test mode (URL ending in #test): each probe's 5x5 pixels (RGBA) and the mean frame time, as JSON
if (testMode) {
  const out = { probes: {}, width: canvas.width, height: canvas.height, frame: R && nf ? R.frames[fi][0] : null };
  const m = current.mvp;
  for (const pr of D.probes) {
    const p = pr.p, c = [0, 1, 2, 3].map(j => m[j] * p[0] + m[4 + j] * p[1] + m[8 + j] * p[2] + m[12 + j]);
    const sx = Math.round((c[0] / c[3] * 0.5 + 0.5) * canvas.width), sy = Math.round((c[1] / c[3] * 0.5 + 0.5) * canvas.height);
    const px5 = new Uint8Array(100); gl.readPixels(sx - 2, sy - 2, 5, 5, gl.RGBA, gl.UNSIGNED_BYTE, px5);
    out.probes[pr.name] = { x: sx, y: sy, px: Array.from(px5) };
  }
  const corner = new Uint8Array(4); gl.readPixels(2, 2, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, corner);
  out.corner = Array.from(corner);
  const frames = 20, t0 = performance.now();
  for (let i = 0; i < frames; i++) { cam.yaw += 0.01; draw(); gl.finish(); }
  out.frame_ms = (performance.now() - t0) / frames;
  cam.yaw -= 0.01 * frames; draw();
  result.textContent = JSON.stringify(out);
}
</script></body></html>
]==]
