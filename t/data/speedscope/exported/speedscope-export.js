// speedscope-export.js - the files in this directory are speedscope's own
// "Export" (speedscope 1.25.0 from npm), made outside the browser: its
// bundle's importer (importProfileGroupFromText) and exporter run in node.
//   npm pack speedscope@1.25.0 && tar xzf speedscope-1.25.0.tgz
//   node speedscope-export.js package/dist/release/speedscope-*.js IN OUT
// The bundle ends by rendering its page into document.body; that call is
// replaced by one that hands the two functions out, and the page's globals
// are stubs.  Sources: t/data/v8/v8_mixed.cpuprofile, v8_recursion.cpuprofile,
// t/data/folded/cpython315_replay.collapsed, t/data/speedscope/{sampled_ms,
// evented_two_threads,profiles_first,bytes}.speedscope.json, and our
// --to speedscope of t/data/tachyon/multithread.bin.
'use strict';
const fs = require('fs');
const path = require('path');
const [bundle, inp, out] = process.argv.slice(2);
const tail = 'mo(C(Os,null,C(Rf,null)),document.body,document.body.lastElementChild||void 0);})();';
let src = fs.readFileSync(bundle, 'utf8');
if (!src.includes(tail)) throw new Error('not the speedscope 1.25.0 bundle this script knows');
src = src.replace(tail, 'globalThis.__ss={imp:Ff,exp:Nm};})();');
const stub = () => new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.toPrimitive ? () => '' : stub()), apply: () => stub(), construct: () => stub() });
Object.assign(globalThis, {
  window: globalThis, document: stub(), navigator: { userAgent: 'node', platform: 'linux' },
  location: { hash: '', search: '', href: 'file:///x', protocol: 'file:' },
  localStorage: { getItem: () => null, setItem: () => {} }, addEventListener() {}, removeEventListener() {},
  matchMedia: () => ({ matches: false, addEventListener() {}, addListener() {} }), requestAnimationFrame: () => 0 });
const log = console.log;
console.log = () => {};
new Function(src)();
(async () => {
  const g = await globalThis.__ss.imp(path.basename(inp), fs.readFileSync(inp, 'utf8'));
  if (!g) throw new Error('speedscope could not import ' + inp);
  fs.writeFileSync(out, JSON.stringify(globalThis.__ss.exp(g)));
  console.log = log;
})().catch((e) => { console.error(String(e)); process.exit(1); });
