// signorini replay viewer: the same case for several solvers side by side, synchronised.
// Reads the trajectory sidecars (schema signorini.replay/1) that the page's data scripts push
// onto window.SIGNORINI_REPLAY as base64 gzip; needs window.THREE (three.js, vendored beside the
// page) and DecompressionStream. Exposes window.signoriniReplay for tests and the report's links.
(function () {
  'use strict';
  var errors = window.__replayErrors || [];
  var api = window.signoriniReplay = {
    ready: false,
    errors: function () { return errors.slice(); },
  };
  var status = document.getElementById('replay-status');
  function fail(msg) {
    errors.push(msg);
    if (status) status.textContent = msg;
  }
  if (typeof THREE === 'undefined') {
    fail('three.js is missing (assets/three/three.min.js): run `bash ci/fetch-three.sh` and write the page again');
    return;
  }
  var inputs = window.SIGNORINI_REPLAY || [];
  if (!inputs.length) { fail('no trajectory in this page'); return; }

  function decode(b64) {
    return fetch('data:application/octet-stream;base64,' + b64).then(function (r) {
      return new Response(r.body.pipeThrough(new DecompressionStream('gzip'))).json();
    });
  }

  Promise.all(inputs.map(function (d) { return decode(d.gz); })).then(start, function (e) {
    fail('could not read a trajectory: ' + e);
  });

  // --- the shared state: camera orbit, current step, play/speed, toggles
  var state = { step: 0, playing: false, speed: 1, contacts: true, arrows: true, az: -0.9, el: 0.45, dist: 3,
    target: new THREE.Vector3() };
  var views = [];
  var maxStep = 0, dt = 0.01, penScale = 1e-4, impulseScale = 1, sceneSize = 1;

  function quat(q) { return new THREE.Quaternion(q[0], q[1], q[2], q[3]); }

  function partMesh(part, material) {
    var s = part.shape, g;
    if (s.kind === 'sphere') g = new THREE.SphereGeometry(Math.max(s.radius, 0.002), 24, 16);
    else if (s.kind === 'box') g = new THREE.BoxGeometry(2 * s.half_extents[0], 2 * s.half_extents[1], 2 * s.half_extents[2]);
    else if (s.kind === 'cylinder') g = new THREE.CylinderGeometry(s.radius, s.radius, 2 * s.half_height, 24);
    else if (s.kind === 'capsule') g = new THREE.CapsuleGeometry(s.radius, 2 * s.half_height, 8, 16);
    else return null;
    var m = new THREE.Mesh(g, material);
    m.position.set(part.pos[0], part.pos[1], part.pos[2]);
    m.quaternion.copy(quat(part.rot));
    return m;
  }

  function frameAt(traj, step) {
    var f = traj.frames, lo = 0, hi = f.length - 1;
    if (step <= f[0].step) return 0;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (f[mid].step <= step) lo = mid; else hi = mid - 1; }
    return lo;
  }

  function bounds(trajs) {
    var box = new THREE.Box3();
    trajs.forEach(function (t) {
      [t.frames[0], t.frames[t.frames.length - 1]].forEach(function (f) {
        f.poses.forEach(function (p) { box.expandByPoint(new THREE.Vector3(p[0], p[1], p[2])); });
        f.nodes.forEach(function (ns) { ns.forEach(function (p) { box.expandByPoint(new THREE.Vector3(p[0], p[1], p[2])); }); });
      });
      t.statics.forEach(function (s) { if (s.part) box.expandByPoint(new THREE.Vector3(s.part.pos[0], s.part.pos[1], s.part.pos[2])); });
    });
    if (box.isEmpty()) box.set(new THREE.Vector3(-0.5, -0.5, 0), new THREE.Vector3(0.5, 0.5, 0.5));
    return box;
  }

  function penColor(pen, c) {
    var x = Math.min(1, pen / penScale);
    return c.setHSL((1 - x) * 0.33, 0.9, 0.45);
  }

  function buildView(traj, input, host) {
    var wrap = document.createElement('div');
    wrap.className = 'view';
    wrap.setAttribute('data-solver', traj.solver);
    var title = document.createElement('div');
    title.className = 'view-title';
    title.textContent = traj.solver;
    var canvas = document.createElement('canvas');
    var info = document.createElement('div');
    info.className = 'metrics';
    wrap.appendChild(title);
    if (traj.notes && traj.notes.length) {
      var notes = document.createElement('div');
      notes.className = 'muted view-notes';
      notes.textContent = traj.notes.join('; ');
      wrap.appendChild(notes);
    }
    wrap.appendChild(canvas); wrap.appendChild(info);
    host.appendChild(wrap);
    var renderer = new THREE.WebGLRenderer({ canvas: canvas, antialias: true, preserveDrawingBuffer: true });
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    var scene = new THREE.Scene();
    scene.background = new THREE.Color(0xf4f5f7);
    scene.add(new THREE.HemisphereLight(0xffffff, 0x8890a0, 2.2));
    var sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(2, -3, 5);
    scene.add(sun);
    var camera = new THREE.PerspectiveCamera(40, 1, sceneSize / 1000, sceneSize * 100);
    camera.up.set(0, 0, 1);
    // static colliders
    var statMat = new THREE.MeshStandardMaterial({ color: 0xb9bec8, roughness: 0.9, transparent: true, opacity: 0.55 });
    traj.statics.forEach(function (s) {
      if (s.kind === 'plane') {
        var size = 4 * sceneSize;
        var g = new THREE.PlaneGeometry(size, size, 8, 8);
        var m = new THREE.Mesh(g, new THREE.MeshStandardMaterial({ color: 0xd5d9e0, roughness: 1, side: THREE.DoubleSide }));
        var n = new THREE.Vector3(s.normal[0], s.normal[1], s.normal[2]);
        m.quaternion.setFromUnitVectors(new THREE.Vector3(0, 0, 1), n);
        var centre = state.target.clone().sub(n.clone().multiplyScalar(n.dot(state.target) - s.offset));
        m.position.copy(centre);
        scene.add(m);
        var grid = new THREE.GridHelper(size, 20, 0xaab0bb, 0xc4c9d2);
        grid.quaternion.copy(m.quaternion).multiply(new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(1, 0, 0), Math.PI / 2));
        grid.position.copy(centre).add(n.clone().multiplyScalar(sceneSize * 1e-4));
        scene.add(grid);
      } else {
        var m = partMesh(s.part, statMat);
        if (m) scene.add(m);
      }
    });
    // bodies: one group each
    var bodies = traj.bodies.map(function (b, i) {
      var grp = new THREE.Group();
      grp.name = b.name;
      grp.userData.body = true;
      var mat = new THREE.MeshStandardMaterial({ color: new THREE.Color().setHSL((i * 0.618) % 1, 0.45, 0.58), roughness: 0.6 });
      b.parts.forEach(function (p) { var m = partMesh(p, mat); if (m) grp.add(m); });
      scene.add(grp);
      return grp;
    });
    // deformable surfaces
    var meshes = traj.meshes.map(function (ms) {
      var n = traj.frames[0].nodes[traj.meshes.indexOf(ms)].length;
      var g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * n), 3));
      var idx = [];
      ms.triangles.forEach(function (t) { idx.push(t[0], t[1], t[2]); });
      g.setIndex(idx);
      var m = new THREE.Mesh(g, new THREE.MeshStandardMaterial({ color: 0x5b8fd6, roughness: 0.55, flatShading: true, side: THREE.DoubleSide }));
      m.userData.body = true;
      var edges = new THREE.LineSegments(new THREE.WireframeGeometry(g), new THREE.LineBasicMaterial({ color: 0x1f3f70, transparent: true, opacity: 0.35 }));
      m.add(edges);
      scene.add(m);
      return { mesh: m, edges: edges };
    });
    // contacts: points coloured by penetration, impulse arrows as line segments
    var maxC = 1;
    traj.frames.forEach(function (f) { maxC = Math.max(maxC, f.contacts.length); });
    var pg = new THREE.BufferGeometry();
    pg.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * maxC), 3));
    pg.setAttribute('color', new THREE.BufferAttribute(new Float32Array(3 * maxC), 3));
    var points = new THREE.Points(pg, new THREE.PointsMaterial({ size: 7, sizeAttenuation: false, vertexColors: true, depthTest: false }));
    points.renderOrder = 2;
    scene.add(points);
    var ag = new THREE.BufferGeometry();
    ag.setAttribute('position', new THREE.BufferAttribute(new Float32Array(6 * maxC), 3));
    var arrows = new THREE.LineSegments(ag, new THREE.LineBasicMaterial({ color: 0xc0392b, depthTest: false }));
    arrows.renderOrder = 3;
    scene.add(arrows);
    return { traj: traj, input: input, wrap: wrap, canvas: canvas, info: info, renderer: renderer, scene: scene,
      camera: camera, bodies: bodies, meshes: meshes, points: points, arrows: arrows, frame: -1 };
  }

  function fmt(x, unit) {
    if (x === null || x === undefined || !isFinite(x)) return 'n/a';
    var a = Math.abs(x);
    var s = a !== 0 && (a < 1e-3 || a >= 1e4) ? x.toExponential(2) : x.toPrecision(3);
    return s + (unit ? ' ' + unit : '');
  }

  function showFrame(v, i) {
    var f = v.traj.frames[i];
    v.frame = i;
    f.poses.forEach(function (p, b) {
      var g = v.bodies[b];
      g.position.set(p[0], p[1], p[2]);
      g.quaternion.set(p[3], p[4], p[5], p[6]);
    });
    v.meshes.forEach(function (m, k) {
      var a = m.mesh.geometry.attributes.position, ns = f.nodes[k];
      for (var j = 0; j < ns.length; j++) a.setXYZ(j, ns[j][0], ns[j][1], ns[j][2]);
      a.needsUpdate = true;
      m.mesh.geometry.computeVertexNormals();
      m.mesh.geometry.computeBoundingSphere();
      m.edges.geometry.dispose();
      m.edges.geometry = new THREE.WireframeGeometry(m.mesh.geometry);
    });
    var pa = v.points.geometry.attributes.position, ca = v.points.geometry.attributes.color;
    var aa = v.arrows.geometry.attributes.position, c = new THREE.Color();
    f.contacts.forEach(function (r, j) {
      pa.setXYZ(j, r[0], r[1], r[2]);
      penColor(r[7], c);
      ca.setXYZ(j, c.r, c.g, c.b);
      var len = r[6] * impulseScale;
      aa.setXYZ(2 * j, r[0], r[1], r[2]);
      aa.setXYZ(2 * j + 1, r[0] + r[3] * len, r[1] + r[4] * len, r[2] + r[5] * len);
    });
    v.points.geometry.setDrawRange(0, f.contacts.length);
    v.arrows.geometry.setDrawRange(0, 2 * f.contacts.length);
    pa.needsUpdate = ca.needsUpdate = aa.needsUpdate = true;
    v.points.geometry.computeBoundingSphere();
    v.arrows.geometry.computeBoundingSphere();
    var m = f.metrics;
    v.info.innerHTML = '';
    var rows = [
      ['step', f.step + ' (t = ' + fmt(f.t, 's') + ')'],
      ['max penetration', fmt(m.penetration_max * 1000, 'mm')],
      ['natural-map residual', fmt(m.natmap_abs_l2, 'N s') + ' (rel ' + fmt(m.natmap_rel_l2) + ')'],
      ['iterations', m.iterations + (m.unconverged == null ? ' — convergence not reported' : m.unconverged ? ' — unconverged' : ' — converged')],
      ['contacts', f.contacts.length + (f.contacts_left_out ? ' (+' + f.contacts_left_out + ' not kept)' : '')],
    ];
    var dl = document.createElement('table');
    rows.forEach(function (r) {
      var tr = dl.insertRow();
      tr.insertCell().textContent = r[0];
      var td = tr.insertCell();
      td.textContent = r[1];
      if (r[0] === 'iterations' && m.unconverged) td.className = 'unconverged';
    });
    v.info.appendChild(dl);
    v.info.setAttribute('data-step', f.step);
    v.info.setAttribute('data-unconverged', m.unconverged == null ? 'unknown' : m.unconverged ? '1' : '0');
  }

  function placeCamera(v) {
    var t = state.target, d = state.dist;
    v.camera.position.set(t.x + d * Math.cos(state.el) * Math.cos(state.az), t.y + d * Math.cos(state.el) * Math.sin(state.az),
      t.z + d * Math.sin(state.el));
    v.camera.lookAt(t);
  }

  function render() {
    views.forEach(function (v) {
      var i = frameAt(v.traj, state.step);
      if (i !== v.frame) showFrame(v, i);
      v.points.visible = state.contacts;
      v.arrows.visible = state.arrows;
      var w = v.canvas.clientWidth, h = v.canvas.clientHeight;
      if (v.canvas.width !== Math.floor(w * v.renderer.getPixelRatio()) || v.canvas.height !== Math.floor(h * v.renderer.getPixelRatio())) {
        v.renderer.setSize(w, h, false);
        v.camera.aspect = w / Math.max(h, 1);
        v.camera.updateProjectionMatrix();
      }
      placeCamera(v);
      v.renderer.render(v.scene, v.camera);
    });
    var slider = document.getElementById('replay-step');
    if (slider && +slider.value !== state.step) slider.value = state.step;
    var label = document.getElementById('replay-step-label');
    if (label) label.textContent = 'step ' + state.step + ' / ' + maxStep + ' (t = ' + fmt(state.step * dt, 's') + ')';
  }

  function setStep(k) {
    state.step = Math.max(0, Math.min(maxStep, Math.round(k)));
    render();
  }

  function controls() {
    var play = document.getElementById('replay-play');
    var slider = document.getElementById('replay-step');
    var speed = document.getElementById('replay-speed');
    slider.max = maxStep;
    slider.addEventListener('input', function () { state.playing = false; play.textContent = 'play'; setStep(+slider.value); });
    play.addEventListener('click', function () {
      if (state.step >= maxStep) setStep(0);
      state.playing = !state.playing;
      play.textContent = state.playing ? 'pause' : 'play';
      last = null;
      if (state.playing) requestAnimationFrame(tick);
    });
    speed.addEventListener('change', function () { state.speed = +speed.value; });
    document.getElementById('replay-contacts').addEventListener('change', function () { state.contacts = this.checked; render(); });
    document.getElementById('replay-arrows').addEventListener('change', function () { state.arrows = this.checked; render(); });
    var simT = 0, last = null;
    function tick(now) {
      if (!state.playing) return;
      if (last !== null) {
        simT = state.step * dt + (now - last) / 1000 * state.speed;
        var k = Math.floor(simT / dt + 1e-9);
        if (k >= maxStep) { k = maxStep; state.playing = false; play.textContent = 'play'; }
        if (k !== state.step) setStep(k);
      }
      last = now;
      requestAnimationFrame(tick);
    }
    // orbit: drag rotates, shift-drag or right-drag pans, the wheel zooms; every view follows
    views.forEach(function (v) {
      var drag = null;
      v.canvas.addEventListener('contextmenu', function (e) { e.preventDefault(); });
      v.canvas.addEventListener('pointerdown', function (e) { drag = { x: e.clientX, y: e.clientY, pan: e.shiftKey || e.button === 2 }; v.canvas.setPointerCapture(e.pointerId); });
      v.canvas.addEventListener('pointerup', function () { drag = null; });
      v.canvas.addEventListener('pointermove', function (e) {
        if (!drag) return;
        var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        drag.x = e.clientX; drag.y = e.clientY;
        if (drag.pan) {
          var right = new THREE.Vector3().setFromMatrixColumn(v.camera.matrixWorld, 0);
          var up = new THREE.Vector3().setFromMatrixColumn(v.camera.matrixWorld, 1);
          var k = state.dist / v.canvas.clientHeight;
          state.target.add(right.multiplyScalar(-dx * k)).add(up.multiplyScalar(dy * k));
        } else {
          state.az -= dx * 0.008;
          state.el = Math.max(-1.5, Math.min(1.5, state.el + dy * 0.008));
        }
        render();
      });
      v.canvas.addEventListener('wheel', function (e) { e.preventDefault(); state.dist *= Math.exp(e.deltaY * 0.001); render(); }, { passive: false });
    });
    window.addEventListener('resize', render);
    window.addEventListener('hashchange', fromHash);
  }

  function fromHash() {
    var m = /step=(\d+)/.exec(location.hash);
    if (m) setStep(+m[1]);
  }

  function start(trajs) {
    var box = bounds(trajs);
    var sphere = box.getBoundingSphere(new THREE.Sphere());
    sceneSize = Math.max(sphere.radius * 2, 0.05);
    state.target.copy(sphere.center);
    state.dist = Math.max(sphere.radius, 0.05) * 3.2;
    dt = trajs[0].dt;
    var maxPen = 0, maxImp = 0;
    trajs.forEach(function (t) {
      t.frames.forEach(function (f) {
        maxStep = Math.max(maxStep, f.step);
        f.contacts.forEach(function (r) { maxPen = Math.max(maxPen, r[7]); maxImp = Math.max(maxImp, r[6]); });
      });
    });
    penScale = Math.max(maxPen, 1e-5);
    impulseScale = maxImp > 0 ? 0.15 * sceneSize / maxImp : 0;
    var legend = document.getElementById('replay-legend');
    if (legend) legend.textContent = 'contact colour: penetration 0 (green) to ' + fmt(penScale * 1000, 'mm') +
      ' (red); arrows: normal impulse, ' + fmt(maxImp, 'N s') + ' = ' + fmt(0.15 * sceneSize, 'm');
    var host = document.getElementById('replay-views');
    views = trajs.map(function (t, i) { return buildView(t, inputs[i], host); });
    controls();
    setStep(0);
    fromHash();
    if (status) status.textContent = '';
    api.ready = true;
  }

  api.setStep = setStep;
  api.step = function () { return state.step; };
  api.maxStep = function () { return maxStep; };
  api.solvers = function () { return views.map(function (v) { return v.traj.solver; }); };
  // distinct rendered objects that stand for bodies (rigid bodies and deformable surfaces) in view i
  api.objectCount = function (i) {
    var n = 0;
    views[i || 0].scene.traverse(function (o) { if (o.userData.body && o.visible) n++; });
    return n;
  };
  api.frame = function (i) { var v = views[i || 0]; return v.traj.frames[v.frame]; };
  api.metricsText = function (i) { return views[i || 0].info.textContent; };
  api.image = function (i) { render(); return views[i || 0].canvas.toDataURL('image/png'); };
  api.largestPenetrationStep = function () {
    var best = 0, pen = -1;
    views.forEach(function (v) { v.traj.frames.forEach(function (f) { if (f.metrics.penetration_max > pen) { pen = f.metrics.penetration_max; best = f.step; } }); });
    return best;
  };
})();
