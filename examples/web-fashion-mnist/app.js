// The Fashion-MNIST page: draw or drop an image, see the top classes. Inputs go through
// classifyCanvas (drawing) or classifyFile (a dropped or chosen image); a dropped
// model.safetensors + run.json replaces the model. Every failure is shown on the page.
// window.emberDemo exposes the same entry points to tests/wasm/browser_test.js.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const draw = $('draw'), small = $('small');
  const dctx = draw.getContext('2d'), sctx = small.getContext('2d', {willReadFrequently: true});
  let ember = null, model = null, firstPredictionMs = null;
  const pending = {weights: null, run: null};

  /// An error on the page; the bars and time of an earlier image go, so that nothing stale
  /// stands beside it.
  function showError(message) {
    $('error').textContent = message;
    $('error').hidden = false;
    $('bars').replaceChildren();
    $('time').textContent = '';
  }
  /// Runs f, showing what it throws on the page.
  function guarded(f) {
    try {
      f();
    } catch (e) {
      showError(describe(e));
    }
  }
  function clearError() {
    $('error').hidden = true;
  }
  const describe = (e) => (e && e.name === 'EmberError' ? e.message : String(e && e.message || e));

  function clearCanvas() {
    dctx.fillStyle = '#000';
    dctx.fillRect(0, 0, draw.width, draw.height);
  }

  /// Classifies what the big canvas shows: scaled to the model's size, gray, [0, 1].
  function classifyCanvas() {
    if (!model) return null;
    small.width = small.height = model.size;
    sctx.imageSmoothingEnabled = true;
    sctx.imageSmoothingQuality = 'high';
    sctx.drawImage(draw, 0, 0, model.size, model.size);
    return classifyPixels(sctx.getImageData(0, 0, model.size, model.size));
  }

  function classifyPixels(imageData) {
    const pixels = model.pixelsFromImageData(imageData, {invert: $('invert').checked});
    const t0 = performance.now();
    const probs = model.predict(pixels);
    const ms = performance.now() - t0;
    const top = model.top(probs, 5);
    render(top, ms);
    if (firstPredictionMs === null) firstPredictionMs = performance.now();
    return {probs: Array.from(probs), top, ms};
  }

  function render(top, ms) {
    $('bars').replaceChildren(...top.map((t) => {
      const li = document.createElement('li');
      li.innerHTML = '<span class="name"></span><span class="track"><div class="bar"></div></span>' +
                     '<span class="pct"></span>';
      li.querySelector('.name').textContent = t.name;
      li.querySelector('.bar').style.width = `${(100 * t.prob).toFixed(1)}%`;
      li.querySelector('.pct').textContent = `${(100 * t.prob).toFixed(1)} %`;
      return li;
    }));
    const n = ember.threads;
    $('time').textContent = `inference: ${ms.toFixed(2)} ms (WebAssembly, ` +
                            `${n === 1 ? 'one thread' : `${n} threads`})`;
  }

  /// An image file: decoded, shown on the canvas, classified at the model's size. A file that
  /// does not decode as an image is an error on the page.
  async function classifyFile(file) {
    if (!model) throw new Error('no model loaded yet');
    let bitmap;
    try {
      bitmap = await createImageBitmap(file);
    } catch (e) {
      throw new Error(`"${file.name}" (${file.type || 'unknown type'}, ${file.size} bytes) could ` +
                      'not be decoded as an image by this browser: not a PNG, JPEG, GIF, BMP or ' +
                      `WebP, or too large to decode (${e && e.message ? e.message : e})`);
    }
    small.width = small.height = model.size;
    sctx.imageSmoothingEnabled = true;
    sctx.imageSmoothingQuality = 'high';
    sctx.clearRect(0, 0, model.size, model.size);
    sctx.drawImage(bitmap, 0, 0, model.size, model.size);
    const imageData = sctx.getImageData(0, 0, model.size, model.size);
    dctx.imageSmoothingEnabled = false;
    clearCanvas();
    dctx.drawImage(small, 0, 0, draw.width, draw.height);
    return classifyPixels(imageData);
  }

  function loadModel(weights, runJson, source) {
    const m = ember.loadModel(weights, runJson);
    if (model) model.dispose();
    model = m;
    $('model').textContent = `Model: ${m.name} (${source}), ${m.channels}x${m.size}x${m.size}, ` +
                             `${m.numClasses} classes`;
  }

  async function tryPendingModel() {
    if (!pending.weights || !pending.run) return;
    const [w, r] = [pending.weights, pending.run];
    pending.weights = pending.run = null;
    loadModel(new Uint8Array(await w.arrayBuffer()), await r.text(), `${w.name} + ${r.name}`);
    clearError();
    classifyCanvas();
  }

  /// Files from a drop or a file input: images are classified, .safetensors / .json files
  /// are a model (both needed), anything else is reported.
  async function handleFiles(files) {
    try {
      clearError();
      // A model is the pair dropped together (or in two drops right after each other); a lone
      // half is only kept until the next drop.
      const weights = files.filter((f) => /\.safetensors$/i.test(f.name));
      const runs = files.filter((f) => /\.json$/i.test(f.name));
      if (weights.length > 1 || runs.length > 1) {
        throw new Error('drop one model.safetensors and one run.json at a time');
      }
      if (!weights.length && !runs.length) pending.weights = pending.run = null;
      if (weights.length) pending.weights = weights[0];
      if (runs.length) pending.run = runs[0];
      for (const f of files) {
        if (!weights.includes(f) && !runs.includes(f)) await classifyFile(f);
      }
      if (weights.length && !pending.run) showError(`${weights[0].name} received: drop its run.json too`);
      if (runs.length && !pending.weights) showError(`${runs[0].name} received: drop its model.safetensors too`);
      await tryPendingModel();
    } catch (e) {
      showError(describe(e));
    }
  }

  // Drawing: white strokes on black, classified as they are drawn.
  let drawing = false;
  draw.addEventListener('pointerdown', (e) => {
    drawing = true;
    draw.setPointerCapture(e.pointerId);
    dctx.beginPath();
    dctx.moveTo(e.offsetX, e.offsetY);
  });
  draw.addEventListener('pointermove', (e) => {
    if (!drawing) return;
    dctx.strokeStyle = '#fff';
    dctx.lineWidth = 22;
    dctx.lineCap = dctx.lineJoin = 'round';
    dctx.lineTo(e.offsetX, e.offsetY);
    dctx.stroke();
    guarded(classifyCanvas);
  });
  draw.addEventListener('pointerup', () => { drawing = false; });
  $('clear').addEventListener('click', () => guarded(() => { clearCanvas(); classifyCanvas(); }));
  $('invert').addEventListener('change', () => guarded(classifyCanvas));

  const drop = $('drop');
  for (const target of [drop, draw]) {
    target.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    target.addEventListener('dragleave', () => drop.classList.remove('over'));
    target.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      handleFiles(Array.from(e.dataTransfer.files));
    });
  }
  $('image-file').addEventListener('change', (e) => handleFiles(Array.from(e.target.files)));
  $('weights-file').addEventListener('change', (e) => handleFiles(Array.from(e.target.files)));
  $('run-file').addEventListener('change', (e) => handleFiles(Array.from(e.target.files)));

  // Start: compile the module, load model/model.safetensors + model/run.json when served.
  clearCanvas();
  const ready = (async () => {
    try {
      ember = await Ember.init();
      const [w, r] = await Promise.all([fetch('model/model.safetensors'), fetch('model/run.json')]);
      if (!w.ok || !r.ok) {
        $('model').textContent = 'No model yet';
        showError('No model at model/ next to this page: drop model.safetensors and run.json of ' +
                  'an `ember train` run directory (or use "Load another model").');
        return;
      }
      loadModel(new Uint8Array(await w.arrayBuffer()), await r.text(), 'model/');
      classifyCanvas();
    } catch (e) {
      showError(describe(e));
    }
  })();

  window.emberDemo = {
    ready,
    classifyFile,
    handleFiles,
    firstPredictionMs: () => firstPredictionMs,
    error: () => ($('error').hidden ? '' : $('error').textContent),
    threads: () => (ember ? ember.threads : 0),
  };
})();
