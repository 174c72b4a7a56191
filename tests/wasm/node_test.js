// The WebAssembly module in node against native Ember (scripts/test-wasm.sh runs it):
// the first COUNT Fashion-MNIST test images through src/web/ember.js, one per call, compared
// with ember_web_reference's JSON (class identical, every probability within 1e-4); then the
// errors (corrupt weights, weights of another architecture, a bad run.json, a wrong pixel
// count) must be EmberErrors with Ember's messages. Exits 1 on any failure.
//
//   node tests/wasm/node_test.js WEB_DIR CNN_RUN MLP_RUN IDX_GZ REF_JSON
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const [webDir, cnnRun, mlpRun, idxPath, refPath] = process.argv.slice(2);
if (!refPath) {
  console.error('usage: node_test.js WEB_DIR CNN_RUN MLP_RUN IDX_GZ REF_JSON');
  process.exit(2);
}
const TOLERANCE = 1e-4;
let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    console.log(`FAIL: ${what}`);
  }
}

/// The first `count` images of a gzipped IDX3 file as Float32Arrays in [0, 1].
function readImages(file, count) {
  const raw = zlib.gunzipSync(fs.readFileSync(file));
  const rows = raw.readUInt32BE(8), cols = raw.readUInt32BE(12), per = rows * cols;
  const images = [];
  for (let i = 0; i < count; ++i) {
    images.push(Float32Array.from(raw.subarray(16 + i * per, 16 + (i + 1) * per), (b) => b / 255));
  }
  return images;
}

function argmax(a) {
  let best = 0;
  for (let i = 1; i < a.length; ++i) if (a[i] > a[best]) best = i;
  return best;
}

function expectError(f, kind, pattern, what) {
  try {
    f();
    check(false, `${what}: no error`);
  } catch (e) {
    const ok = e.name === 'EmberError' && e.kind === kind && pattern.test(e.message);
    check(ok, `${what}: got ${e.name} ${e.kind} "${e.message}"`);
    if (ok) console.log(`  ${what}: ${e.kind}: ${e.message.split('\n')[0]}`);
  }
}

(async () => {
  const Ember = require(path.resolve(webDir, 'ember.js'));
  const ref = JSON.parse(fs.readFileSync(refPath, 'utf8'));
  const images = readImages(idxPath, ref.count);
  const weights = fs.readFileSync(path.join(cnnRun, 'model.safetensors'));
  const runJson = fs.readFileSync(path.join(cnnRun, 'run.json'), 'utf8');

  // EMBER_WEB_THREADS=0: the single-threaded build; else the threaded one (Web Workers as
  // node worker_threads), which must use one thread per core (at most 8).
  const single = process.env.EMBER_WEB_THREADS === '0';
  const label = single ? 'single-threaded build' : 'threaded build';
  const t0 = performance.now();
  const ember = await Ember.init({threads: !single});
  const model = ember.loadModel(weights, runJson);
  model.predict(images[0]);
  const firstMs = performance.now() - t0;

  const cores = require('os').cpus().length;
  check(ember.threaded === !single && ember.threads === (single ? 1 : Math.min(8, cores)),
        `${label}: ${ember.threads} threads on ${cores} cores`);
  check(model.name === ref.model, `model name ${model.name}`);
  check(model.classes.length === 10 && model.classes[9] === 'Ankle boot', 'class names');
  let same = 0, maxDiff = 0;
  const t1 = performance.now();
  for (let i = 0; i < images.length; ++i) {
    const p = model.predict(images[i]);
    const want = ref.probs[i];
    let diff = 0;
    for (let c = 0; c < want.length; ++c) diff = Math.max(diff, Math.abs(p[c] - want[c]));
    maxDiff = Math.max(maxDiff, diff);
    const sameClass = argmax(p) === argmax(want);
    if (sameClass) ++same;
    check(sameClass && diff <= TOLERANCE && p.length === want.length,
          `image ${i}: class ${argmax(p)} vs native ${argmax(want)}, max |dp| ${diff}`);
  }
  const msPerImage = (performance.now() - t1) / images.length;
  // A batch gives the same probabilities as single images.
  const batch = new Float32Array(4 * 784);
  for (let i = 0; i < 4; ++i) batch.set(images[i], i * 784);
  const pb = model.predict(batch);
  let batchDiff = 0;
  for (let i = 0; i < 4; ++i) {
    for (let c = 0; c < 10; ++c) batchDiff = Math.max(batchDiff, Math.abs(pb[i * 10 + c] - ref.probs[i][c]));
  }
  check(pb.length === 40 && batchDiff <= TOLERANCE, `batch of 4: max |dp| ${batchDiff}`);
  // All images as one batch; with threads the result must not depend on their number (the
  // work is split by rows or columns of each GEMM, each element summed in the same order).
  const all = new Float32Array(images.length * 784);
  images.forEach((im, i) => all.set(im, i * 784));
  const t2 = performance.now();
  const pAll = model.predict(all);
  const msPerImageBatched = (performance.now() - t2) / images.length;
  const team = ember.threads;
  ember.setThreads(1);
  const pOne = model.predict(all);
  ember.setThreads(team);
  check(ember.threads === team, `setThreads(${team}) restores ${team} threads`);
  check(pAll.every((v, i) => v === pOne[i]),
        `batch of ${images.length} on ${team} threads equals 1 thread bit for bit`);
  const top = model.top(model.predict(images[0]), 3);
  check(top.length === 3 && top[0].label === argmax(ref.probs[0]) && top[0].prob >= top[1].prob,
        'top(): most likely first');

  console.log('errors:');
  const truncated = weights.subarray(0, Math.floor(weights.length / 2));
  expectError(() => ember.loadModel(truncated, runJson), 'IoError', /safetensors/,
              'truncated model.safetensors');
  expectError(() => ember.loadModel(new TextEncoder().encode('not a model'), runJson), 'IoError',
              /safetensors/, 'text file as weights');
  const mlpWeights = fs.readFileSync(path.join(mlpRun, 'model.safetensors'));
  expectError(() => ember.loadModel(mlpWeights, runJson), 'ValueError', /'mlp' model.*'cnn' model/,
              'mlp weights with the cnn run.json');
  expectError(() => ember.loadModel(weights, '{"format": "other"}'), 'ValueError', /run\.json/,
              'not a run.json');
  expectError(() => ember.loadModel(weights, '{oops'), 'ValueError', /not JSON/, 'broken JSON');
  expectError(() => model.predict(new Float32Array(100)), 'ShapeError', /784/,
              '100 pixels for a 28x28 model');
  // run.json's image must be the model's: a CNN of 28x28 described as 32x32 or 3 channels.
  const withData = (patch) => {
    const j = JSON.parse(runJson);
    Object.assign(j.data, patch);
    return JSON.stringify(j);
  };
  expectError(() => ember.loadModel(weights, withData({size: 32})), 'ValueError',
              /images of 1x32x32 .*image_size = 28/, 'run.json size 32 for a 28x28 cnn');
  expectError(() => ember.loadModel(weights, withData({channels: 3})), 'ValueError',
              /images of 3x28x28 .*in_channels = 1/, 'run.json 3 channels for a 1-channel cnn');
  expectError(() => ember.loadModel(weights, withData({size: 0.5})), 'ValueError',
              /'size' must be an integer, got 0\.5/, 'run.json size 0.5');
  expectError(() => ember.loadModel(weights, withData({size: 100000})), 'ValueError',
              /data\.size 100000/, 'run.json size 100000');
  const mlpRunJson = fs.readFileSync(path.join(mlpRun, 'run.json'), 'utf8');
  const mlpData = JSON.parse(mlpRunJson);
  mlpData.data.size = 27;
  expectError(() => ember.loadModel(mlpWeights, JSON.stringify(mlpData)), 'ValueError',
              /1x27x27 .*d_input = 784/, 'run.json size 27 for a 784-input mlp');
  // Pixels that are not numbers name the input, not the model.
  const nanImage = Float32Array.from(images[0]);
  nanImage[5] = NaN;
  expectError(() => model.predict(nanImage), 'ValueError', /pixel 5 of image 0 is not a finite/,
              'a NaN pixel');
  // Arguments of the wrong JavaScript type.
  expectError(() => ember.loadModel(weights, null), 'ValueError', /text of run\.json.*got null/,
              'run.json null');
  expectError(() => ember.loadModel(weights, JSON.parse(runJson)), 'ValueError',
              /text of run\.json.*got an Object/, 'run.json as an object');
  expectError(() => ember.loadModel(null, runJson), 'ValueError',
              /bytes of model\.safetensors.*got null/, 'weights null');
  expectError(() => ember.loadModel('hello', runJson), 'ValueError',
              /bytes of model\.safetensors.*got a string/, 'weights as a string');
  expectError(() => model.predict(null), 'ValueError', /Float32Array.*got null/, 'predict(null)');
  expectError(() => model.predict(7), 'ValueError', /Float32Array.*got number/, 'predict(7)');
  expectError(() => model.predict(new Uint8Array(784)), 'ValueError', /bytes 0\.\.255\?/,
              'pixels as bytes');
  expectError(() => model.predict(new Float32Array(1000)), 'ShapeError',
              /multiple of 784 values\), got 1000/, '1000 pixels');
  expectError(() => model.top(null), 'ValueError', /10 probabilities/, 'top(null)');
  expectError(() => model.pixelsFromImageData(null), 'ValueError', /ImageData/,
              'pixelsFromImageData(null)');
  // Out of the module's memory: an OutOfMemoryError, and the module goes on working (the
  // threaded build has a fixed 256 MiB heap, the other grows to 2 GiB).
  expectError(() => model.predict(new Float32Array(20000 * 784)), 'OutOfMemoryError',
              /\[alloc\] .*\[20000, /, 'a batch of 20000 images');
  if (!single) {
    expectError(() => model.predict(new Float32Array(1000 * 784).fill(0.3)), 'OutOfMemoryError',
                /\[alloc\] out of memory allocating/, 'a batch of 1000 images in the threaded build');
    expectError(() => model.predict(new Float32Array(784 * 102400)), 'OutOfMemoryError',
                /bytes for the pixels .*at most 256 MiB/, 'pixels beyond the 256 MiB heap');
  }
  // A model whose tensors cannot exist in 32-bit memory (a CNN of 4096x4096 images: fc1 has
  // 2^33 weights) is refused cleanly, not built over wrapped sizes.
  const header = Number(weights.readBigUInt64LE(0));
  const meta = JSON.parse(weights.subarray(8, 8 + header).toString('utf8'));
  delete meta.__metadata__;
  const metaBytes = Buffer.from(JSON.stringify(meta), 'utf8');
  const noConfig = Buffer.alloc(8 + metaBytes.length + weights.length - 8 - header);
  noConfig.writeBigUInt64LE(BigInt(metaBytes.length), 0);
  metaBytes.copy(noConfig, 8);
  weights.copy(noConfig, 8 + metaBytes.length, 8 + header);
  const huge = JSON.parse(runJson);
  huge.model.config.image_size = 4096;
  huge.data.size = 4096;
  expectError(() => ember.loadModel(noConfig, JSON.stringify(huge)), 'OutOfMemoryError',
              /alloc/, 'a 4096x4096 CNN');
  try {
    await Ember.init({threads: 'x'});
    check(false, 'init({threads: "x"}): no error');
  } catch (e) {
    check(e.name === 'EmberError' && e.kind === 'ValueError' && /threads must be/.test(e.message),
          `init({threads: "x"}): ${e.message}`);
  }
  // The model still works after all of these.
  check(argmax(model.predict(images[0])) === argmax(ref.probs[0]), 'model intact after errors');
  // The MLP run loads with its own run.json and classifies too.
  const mlp = ember.loadModel(mlpWeights, mlpRunJson);
  const pm = mlp.predict(images[0]);
  check(mlp.name === 'mlp' && Math.abs(pm.reduce((a, b) => a + b, 0) - 1) < 1e-5, 'mlp run loads');
  mlp.dispose();
  model.dispose();
  expectError(() => model.predict(images[0]), 'Error', /disposed/, 'predict after dispose');

  expectError(() => ember.setThreads(0), 'ValueError', /integer >= 1/, 'setThreads(0)');

  // A script that only initialises the module ends by itself (the threaded build's workers do
  // not keep node alive).
  const child = require('child_process').spawnSync(process.execPath, ['-e',
      `require(${JSON.stringify(path.resolve(webDir, 'ember.js'))}).init({threads: ${!single}})` +
      `.then((e) => console.log('threads ' + e.threads))`], {timeout: 30000, encoding: 'utf8'});
  check(child.status === 0 && /threads \d/.test(child.stdout),
        `node exits after init: status ${child.status} ${child.signal || ''} ${child.stdout}`);

  const ratio = msPerImage / ref.ms_per_image;
  console.log(`node (${label}, ${team} threads): ${same}/${images.length} classes identical ` +
              `to native, max |dp| ${maxDiff.toExponential(2)}; first prediction ` +
              `${firstMs.toFixed(0)} ms after start; ${msPerImage.toFixed(3)} ms per image one ` +
              `at a time (native ${ref.ms_per_image.toFixed(3)} ms, ratio ${ratio.toFixed(2)}), ` +
              `${msPerImageBatched.toFixed(3)} ms per image in one batch of ${images.length}`);
  console.log(`node: ${passed} checks passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.error('FAIL:', e);
  process.exit(1);
});
