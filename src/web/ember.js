// Ember in the browser (and in node): image classifiers trained by `ember train`, run by
// Ember's CPU backend compiled to WebAssembly (build/wasm/web/, scripts/build-wasm.sh).
//
//   <script src="ember.js"></script>          (node: const Ember = require('.../ember.js'))
//   const ember = await Ember.init();   // loads and compiles the module; ember.threads threads
//   const ember = await Ember.init({threads: false});        // the single-threaded build
//   const model = ember.loadModel(safetensorsBytes, runJsonText);  // model.safetensors, run.json
//   const probs = model.predict(pixels);   // Float32Array [C*size*size] in [0, 1] -> [classes]
//   model.top(probs, 3);                   // [{label, name, prob}, ...], most likely first
//   model.pixelsFromImageData(ctx.getImageData(0, 0, model.size, model.size), {invert: false});
//   model.dispose();
//
// Two builds of the module sit beside this file: ember-web-threads.{js,wasm,worker.js} runs
// the kernels on a team of Web Workers (one per core, at most 8) and needs SharedArrayBuffer,
// which browsers give only to cross-origin isolated pages (served with the headers
// Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp);
// ember-web.{js,wasm} runs on the calling thread everywhere else. init() picks the threaded one
// where it can (always in node), unless {threads: false}. The threaded build's heap is fixed
// at 256 MiB, the other's grows to 2 GiB; beyond them calls throw an OutOfMemoryError.
//
// Failures throw Ember.EmberError: `message` is Ember's ("[safetensors] ..."), `kind` its
// error class ("IoError", "ValueError", "ShapeError", ...).
(function (global) {
  'use strict';

  // This script's own URL: the module's files are found next to it.
  const scriptUrl = typeof document !== 'undefined' && document.currentScript
                        ? document.currentScript.src
                        : null;

  class EmberError extends Error {
    constructor(message, kind) {
      super(message);
      this.name = 'EmberError';
      this.kind = kind;
    }
  }

  class Model {
    constructor(m, handle) {
      this._m = m;
      this._h = handle;
      this.name = m.UTF8ToString(m._ember_model_name(handle));
      this.channels = m._ember_channels(handle);
      this.size = m._ember_size(handle);
      this.numClasses = m._ember_num_classes(handle);
      this.classes = [];
      for (let i = 0; i < this.numClasses; ++i) {
        this.classes.push(m.UTF8ToString(m._ember_class_name(handle, i)));
      }
    }

    /// Probabilities of one image, or of n images concatenated: pixels [n, C, size, size] in
    /// [0, 1] (light objects on dark) -> Float32Array [n * numClasses].
    predict(pixels) {
      const m = this._live();
      const per = this.channels * this.size * this.size;
      if (!(pixels instanceof Float32Array)) {
        const arrayLike = pixels !== null && typeof pixels === 'object' &&
                          Number.isSafeInteger(pixels.length) && pixels.length >= 0;
        const integers = ArrayBuffer.isView(pixels) && !(pixels instanceof Float64Array);
        if (!arrayLike || integers) {
          throw new EmberError(
              '[web] predict expects a Float32Array (or an array of numbers) of pixels in ' +
              `[0, 1], got ${describeValue(pixels)}` +
              (integers ? ' (bytes 0..255? divide by 255, or use pixelsFromImageData)' : ''),
              'ValueError');
        }
        if (pixels.length > 0x10000000) {
          throw new EmberError(`[web] ${pixels.length} pixels is more than the module can hold`,
                               'OutOfMemoryError');
        }
        try {
          pixels = Float32Array.from(pixels);
        } catch (e) {
          throw new EmberError(`[web] predict: the pixels are not numbers (${e.message})`,
                               'ValueError');
        }
      }
      if (pixels.length === 0 || pixels.length % per !== 0) {
        throw new EmberError(`[web] expected the pixels of whole images of ${this.channels}x` +
                             `${this.size}x${this.size} (a multiple of ${per} values), got ` +
                             `${pixels.length} values`, 'ShapeError');
      }
      const count = pixels.length / per;
      const inPtr = alloc(m, pixels.length * 4, 'the pixels');
      let outPtr = 0;
      try {
        outPtr = alloc(m, count * this.numClasses * 4, 'the probabilities');
        m.HEAPF32.set(pixels, inPtr >> 2);
        if (m._ember_predict(this._h, inPtr, pixels.length, count, outPtr) !== 0) throwLast(m);
        return m.HEAPF32.slice(outPtr >> 2, (outPtr >> 2) + count * this.numClasses);
      } finally {
        m._free(inPtr);
        m._free(outPtr);
      }
    }

    /// The k most likely classes of one image's probabilities: [{label, name, prob}].
    top(probs, k = 3) {
      if (probs === null || typeof probs !== 'object' || probs.length !== this.numClasses) {
        throw new EmberError(`[web] top expects the ${this.numClasses} probabilities of one ` +
                             `image, got ${describeValue(probs)}` +
                             (probs && typeof probs.length === 'number'
                                  ? ` of length ${probs.length}` : ''), 'ValueError');
      }
      const order = Array.from(probs, (p, label) => ({label, name: this.classes[label], prob: p}));
      order.sort((a, b) => b.prob - a.prob || a.label - b.label);
      return order.slice(0, k);
    }

    /// An RGBA ImageData of size x size (a canvas's getImageData) as the model's input:
    /// gray = (r + g + b) / 3 weighted by alpha over black, scaled to [0, 1]; `invert` for dark
    /// drawings on a light background. Throws EmberError for another size.
    pixelsFromImageData(image, {invert = false} = {}) {
      if (image === null || typeof image !== 'object' || !image.data ||
          image.data.length !== 4 * image.width * image.height) {
        throw new EmberError('[web] pixelsFromImageData expects an ImageData (RGBA, width x ' +
                             `height x 4 bytes), got ${describeValue(image)}`, 'ValueError');
      }
      if (image.width !== this.size || image.height !== this.size) {
        throw new EmberError(`[web] expected a ${this.size}x${this.size} image, got ` +
                             `${image.width}x${image.height}`, 'ShapeError');
      }
      const n = this.size * this.size, d = image.data;
      const out = new Float32Array(n * this.channels);
      for (let i = 0; i < n; ++i) {
        const a = d[4 * i + 3] / 255;
        for (let c = 0; c < this.channels; ++c) {
          const v = this.channels === 1 ? (d[4 * i] + d[4 * i + 1] + d[4 * i + 2]) / 3
                                        : d[4 * i + Math.min(c, 2)];
          const x = (v * a) / 255;
          out[c * n + i] = invert ? 1 - x : x;
        }
      }
      return out;
    }

    /// Frees the model's memory in the module.
    dispose() {
      if (this._h) this._m._ember_free(this._h);
      this._h = 0;
    }

    _live() {
      if (!this._h) throw new EmberError('[web] the model was disposed', 'Error');
      return this._m;
    }
  }

  /// A short description of a JavaScript value for messages: its type, or its class.
  function describeValue(v) {
    if (v === null) return 'null';
    if (typeof v !== 'object') return typeof v === 'string' ? 'a string' : typeof v;
    const name = v.constructor && v.constructor.name;
    return name ? `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}` : 'an object';
  }

  /// `bytes` of the module's memory, or EmberError (OutOfMemoryError) when it cannot grow.
  function alloc(m, bytes, what) {
    const p = m._malloc(Math.max(1, bytes));
    if (!p) {
      throw new EmberError(`[web] out of memory: ${bytes} bytes for ${what} do not fit in the ` +
                           `WebAssembly module's memory (at most ${m._ember_memory_mib()} MiB)`,
                           'OutOfMemoryError');
    }
    return p;
  }

  function throwLast(m) {
    throw new EmberError(m.UTF8ToString(m._ember_last_error()),
                         m.UTF8ToString(m._ember_last_error_kind()));
  }

  class Ember {
    constructor(m, threaded) {
      this._m = m;
      /// Whether this is the threaded build (Web Workers) or the single-threaded one.
      this.threaded = threaded;
    }
    /// Threads the kernels use: 1 in the single-threaded build, else the team's size (the
    /// cores, at most 8) unless set lower.
    get threads() {
      return this._m._ember_threads();
    }
    /// Uses at most n threads from now on (more than the team's size means all of it).
    setThreads(n) {
      if (!Number.isInteger(n) || n < 1) {
        throw new EmberError('[web] setThreads expects an integer >= 1, got ' +
                             `${typeof n === 'string' ? JSON.stringify(n) : n}`, 'ValueError');
      }
      this._m._ember_set_threads(n);
    }
    /// A classifier from model.safetensors's bytes (Uint8Array or ArrayBuffer) and the text
    /// of the run's run.json. Throws EmberError for a corrupt file, JSON that is not a run
    /// configuration, or weights of another architecture.
    loadModel(safetensors, runJson) {
      const m = this._m;
      let bytes;
      if (safetensors instanceof Uint8Array) bytes = safetensors;
      else if (safetensors instanceof ArrayBuffer) bytes = new Uint8Array(safetensors);
      else if (ArrayBuffer.isView(safetensors)) {
        bytes = new Uint8Array(safetensors.buffer, safetensors.byteOffset, safetensors.byteLength);
      } else {
        throw new EmberError('[web] loadModel expects the bytes of model.safetensors (a ' +
                             `Uint8Array or ArrayBuffer), got ${describeValue(safetensors)}`,
                             'ValueError');
      }
      if (typeof runJson !== 'string') {
        throw new EmberError('[web] loadModel expects the text of run.json (a string), got ' +
                             `${describeValue(runJson)}`, 'ValueError');
      }
      const n = m.lengthBytesUTF8(runJson) + 1;
      const bytesPtr = alloc(m, bytes.length, 'model.safetensors');
      let jsonPtr = 0;
      try {
        jsonPtr = alloc(m, n, 'run.json');
        m.HEAPU8.set(bytes, bytesPtr);
        m.stringToUTF8(runJson, jsonPtr, n);
        const h = m._ember_load(bytesPtr, bytes.length, jsonPtr);
        if (!h) throwLast(m);
        return new Model(m, h);
      } finally {
        m._free(bytesPtr);
        m._free(jsonPtr);
      }
    }
  }

  /// Adds <script src=name> (next to this script) to the page; resolves once it ran.
  function loadScript(name) {
    return new Promise((resolve, reject) => {
      const el = document.createElement('script');
      el.src = new URL(name, scriptUrl || global.location.href).href;
      el.onload = resolve;
      el.onerror = () => reject(new EmberError(`[web] could not load ${el.src}`, 'IoError'));
      document.head.appendChild(el);
    });
  }

  /// Loads and compiles the module: the threaded build where the environment allows it (node;
  /// a cross-origin isolated page) and options.threads is not false, else the single-threaded
  /// one. options.threads may also be a number (at most that many threads). Other options go
  /// to Emscripten's factory (locateFile, wasmBinary, ...). Under node the .wasm is read from
  /// this file's folder (node's own fetch cannot read files).
  async function init(options = {}) {
    const {threads = 'auto', ...factoryOptions} = options || {};
    if (!(threads === 'auto' || threads === true || threads === false ||
          (Number.isInteger(threads) && threads >= 1))) {
      throw new EmberError('[web] init: threads must be "auto", true, false or an integer >= 1, ' +
                           `got ${typeof threads === 'string' ? JSON.stringify(threads) : threads}`,
                           'ValueError');
    }
    const wantThreads = threads !== false && threads !== 1;
    const inNode = typeof module === 'object' && module.exports;
    let factory = null, threaded = false, base = 'ember-web';
    if (inNode) {
      const fs = require('fs'), path = require('path');
      if (wantThreads && fs.existsSync(path.join(__dirname, 'ember-web-threads.js'))) {
        base = 'ember-web-threads';
        threaded = true;
      }
      factory = require(`./${base}.js`);
      if (!factoryOptions.wasmBinary && !factoryOptions.locateFile) {
        factoryOptions.wasmBinary = fs.readFileSync(path.join(__dirname, `${base}.wasm`));
      }
    } else {
      const isolated = global.crossOriginIsolated === true &&
                       typeof SharedArrayBuffer === 'function' && typeof document !== 'undefined';
      if (wantThreads && isolated) {
        try {
          if (typeof global.EmberWasmThreads !== 'function') await loadScript('ember-web-threads.js');
          factory = global.EmberWasmThreads;
          threaded = typeof factory === 'function';
        } catch (e) {
          factory = null;  // not deployed: the single-threaded build below
        }
      }
      if (!threaded) {
        if (typeof global.EmberWasm !== 'function' && typeof document !== 'undefined') {
          await loadScript('ember-web.js');
        }
        factory = global.EmberWasm;
      }
    }
    if (typeof factory !== 'function') {
      throw new EmberError('[web] ember-web.js is not loaded (in a worker, importScripts it ' +
                           'before ember.js)', 'Error');
    }
    const m = await factory(factoryOptions);
    if (inNode && threaded && m.PThread) {
      // The team's worker_threads must not keep node running once the script is done.
      for (const w of [...m.PThread.unusedWorkers, ...m.PThread.runningWorkers]) {
        if (w && typeof w.unref === 'function') w.unref();
      }
    }
    const ember = new Ember(m, threaded);
    if (typeof threads === 'number') ember.setThreads(threads);
    return ember;
  }

  const api = {init, EmberError};
  if (typeof module === 'object' && module.exports) {
    module.exports = api;
  } else {
    global.Ember = api;
  }
})(typeof self !== 'undefined' ? self : globalThis);
