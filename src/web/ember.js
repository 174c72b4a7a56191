// Ember in the browser (and in node): image classifiers trained by `ember train`, run by
// Ember's CPU backend compiled to WebAssembly (build/wasm/web/, scripts/build-wasm.sh).
//
//   <script src="ember-web.js"></script> <script src="ember.js"></script>
//   const ember = await Ember.init();                        // compiles ember-web.wasm
//   const model = ember.loadModel(safetensorsBytes, runJsonText);  // model.safetensors, run.json
//   const probs = model.predict(pixels);   // Float32Array [C*size*size] in [0, 1] -> [classes]
//   model.top(probs, 3);                   // [{label, name, prob}, ...], most likely first
//   model.pixelsFromImageData(ctx.getImageData(0, 0, model.size, model.size), {invert: false});
//   model.dispose();
//
// Failures throw Ember.EmberError: `message` is Ember's ("[safetensors] ..."), `kind` its
// error class ("IoError", "ValueError", "ShapeError", ...).
(function (global) {
  'use strict';

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
      if (!(pixels instanceof Float32Array)) pixels = Float32Array.from(pixels);
      const per = this.channels * this.size * this.size;
      const count = Math.max(1, Math.floor(pixels.length / per));
      const inPtr = m._malloc(pixels.length * 4);
      const outPtr = m._malloc(count * this.numClasses * 4);
      try {
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
      const order = Array.from(probs, (p, label) => ({label, name: this.classes[label], prob: p}));
      order.sort((a, b) => b.prob - a.prob || a.label - b.label);
      return order.slice(0, k);
    }

    /// An RGBA ImageData of size x size (a canvas's getImageData) as the model's input:
    /// gray = (r + g + b) / 3 weighted by alpha over black, scaled to [0, 1]; `invert` for dark
    /// drawings on a light background. Throws EmberError for another size.
    pixelsFromImageData(image, {invert = false} = {}) {
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

  function throwLast(m) {
    throw new EmberError(m.UTF8ToString(m._ember_last_error()),
                         m.UTF8ToString(m._ember_last_error_kind()));
  }

  class Ember {
    constructor(m) {
      this._m = m;
    }
    /// A classifier from model.safetensors's bytes (Uint8Array or ArrayBuffer) and the text
    /// of the run's run.json. Throws EmberError for a corrupt file, JSON that is not a run
    /// configuration, or weights of another architecture.
    loadModel(safetensors, runJson) {
      const m = this._m;
      const bytes = safetensors instanceof Uint8Array ? safetensors : new Uint8Array(safetensors);
      const n = m.lengthBytesUTF8(runJson) + 1;
      const bytesPtr = m._malloc(Math.max(1, bytes.length));
      const jsonPtr = m._malloc(n);
      try {
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

  /// Compiles the module; `options` go to Emscripten's factory (locateFile, wasmBinary, ...).
  async function init(options = {}) {
    const factory = typeof module === 'object' && module.exports ? require('./ember-web.js')
                                                                 : global.EmberWasm;
    if (typeof factory !== 'function') {
      throw new EmberError('[web] ember-web.js is not loaded (include it before ember.js)',
                           'Error');
    }
    return new Ember(await factory(options));
  }

  const api = {init, EmberError};
  if (typeof module === 'object' && module.exports) {
    module.exports = api;
  } else {
    global.Ember = api;
  }
})(typeof self !== 'undefined' ? self : globalThis);
