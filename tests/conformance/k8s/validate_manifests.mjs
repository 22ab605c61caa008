// Validates every document of the YAML files in DIR against the Kubernetes
// OpenAPI schemas shipped by the npm package kubernetes-models: the model class
// for each document's apiVersion and kind, then its validate(). A kind the
// package does not know is an error (every manifest must be checked).
//   node validate_manifests.mjs DIR
// It runs from a copy next to the node_modules holding kubernetes-models and
// yaml (check-manifests.sh puts it there), so that both resolve.
import fs from "node:fs";
import path from "node:path";

const dir = process.argv[2];
const load = (spec) => import(spec);
const YAML = (await load("yaml")).default;

let docs = 0, errors = 0;
const kinds = new Set();
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort()) {
  const text = fs.readFileSync(path.join(dir, file), "utf8");
  for (const doc of YAML.parseAllDocuments(text)) {
    if (doc.errors.length) {
      console.log(`${file}: not YAML: ${doc.errors[0].message}`);
      errors++;
      continue;
    }
    const obj = doc.toJS();
    if (obj === null || obj === undefined) continue;
    docs++;
    const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : ["", obj.apiVersion];
    const where = `${file}: ${obj.kind} ${obj.metadata?.namespace ? obj.metadata.namespace + "/" : ""}${obj.metadata?.name}`;
    let mod;
    try {
      mod = await load(`kubernetes-models/${group ? group + "/" : ""}${version}/${obj.kind}`);
    } catch (e) {
      console.log(`${where}: kubernetes-models has no ${obj.apiVersion} ${obj.kind}`);
      errors++;
      continue;
    }
    kinds.add(`${obj.apiVersion} ${obj.kind}`);
    try {
      new mod[obj.kind](obj).validate();
    } catch (e) {
      console.log(`${where}: ${e.message}`);
      errors++;
    }
  }
}
console.log(`${docs} documents, ${kinds.size} kinds (${[...kinds].sort().join(", ")}), ${errors} errors`);
process.exit(errors || docs === 0 ? 1 : 0);
