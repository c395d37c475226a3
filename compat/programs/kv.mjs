// Key-value bucket: put, get, create, update, delete, purge, history, watch, keys.
import { Kvm } from "@nats-io/kv";
import { run, attempt } from "./lib.mjs";

const entry = (e) => e && { key: e.key, value: e.string(), revision: e.revision, operation: e.operation, delta: e.delta };

run(async (nc) => {
  const kvm = new Kvm(nc);
  const kv = await kvm.create("config", { history: 5 });
  const r = {};
  r.put1 = await kv.put("a", "1");
  r.put2 = await kv.put("a", "2");
  r.put_b = await kv.put("b.c", "x");
  r.get = entry(await kv.get("a"));
  r.get_rev = entry(await kv.get("a", { revision: 1 }));
  r.create_exists = await attempt(() => kv.create("a", "3"));
  r.update_ok = await kv.update("a", "3", 2);
  r.update_stale = await attempt(() => kv.update("a", "4", 2));
  await kv.delete("b.c");
  r.get_deleted = entry(await kv.get("b.c"));
  r.create_after_delete = await kv.create("b.c", "again");
  const hist = [];
  for await (const e of await kv.history({ key: "a" })) hist.push(entry(e));
  r.history = hist;
  const keys = [];
  for await (const k of await kv.keys()) keys.push(k);
  r.keys = keys.sort();
  // The put waits for the watcher's first entry (the current value): put
  // before it, and that entry's delta (updates still pending when it was
  // delivered) would depend on which came first, on either server.
  const watched = [];
  const w = await kv.watch({ key: "a" });
  let sawCurrent;
  const current = new Promise((resolve) => { sawCurrent = resolve; });
  const done = (async () => {
    for await (const e of w) {
      watched.push(entry(e));
      sawCurrent();
      if (e.string() === "5") break;
    }
  })();
  await current;
  await kv.put("a", "5");
  await done;
  r.watch = watched;
  await kv.purge("a");
  r.get_purged = entry(await kv.get("a"));
  const st = await kv.status();
  r.status = { bucket: st.bucket, values: st.values, history: st.history, backingStore: st.backingStore };
  r.missing_bucket = await attempt(async () => entry(await (await kvm.open("nobucket")).get("x")));
  return r;
});
