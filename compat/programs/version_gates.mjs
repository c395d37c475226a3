// Every feature nats.js 3.4.0 gates on the server version in INFO at or
// below the version jetwal announces (2.11.0), used end to end: the client
// would refuse each one on an older server (nats-core's Features table).
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import { run, attempt } from "./lib.mjs";

const stored = (m) => m && { seq: m.seq, subject: m.subject, data: m.string() };

async function collect(iterPromise) {
  const out = [];
  for await (const m of await iterPromise) out.push(stored(m));
  return out;
}

async function fetchAll(c, opts) {
  const out = [];
  for await (const m of await c.fetch(opts)) {
    out.push([m.seq, m.subject, m.string()]);
    m.ack();
  }
  return out;
}

// eventually polls fn until it returns a truthy value (at most ~10s).
async function eventually(fn) {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const r = { version_gated: {} };
  const g = r.version_gated;
  // Which gates the client sees open: all of these must be ok.
  for (const f of ["js_kv", "js_objectstore", "js_pull_max_bytes", "js_new_consumer_create", "js_allow_direct",
    "js_simplification", "js_multiple_consumer_filter", "js_stream_consumer_metadata", "js_consumer_filter_subjects",
    "js_stream_first_seq", "js_stream_subject_transform", "js_stream_source_subject_transform", "js_stream_compression",
    "js_default_consumer_limits", "js_batch_direct_get", "js_priority_groups"]) {
    g[f] = nc.features.get(f).ok;
  }

  // JS_KV (2.6.2), JS_ALLOW_DIRECT (2.9.0), JS_NEW_CONSUMER_CREATE_API (2.9.0: a named watcher).
  r.kv = await attempt(async () => {
    const kv = await new Kvm(nc).create("gates", { allow_direct: true });
    await kv.put("k", "v1");
    const st = await kv.status();
    const w = await kv.watch({ key: "k", name: "gate_watcher" });
    let seen = null;
    for await (const e of w) { seen = e.string(); break; }
    return { get: (await kv.get("k")).string(), allow_direct: st.streamInfo.config.allow_direct, watched: seen };
  });

  // JS_OBJECTSTORE (2.6.3).
  r.obj = await attempt(async () => {
    const os = await new Objm(nc).create("gates");
    await os.putBlob({ name: "o" }, new TextEncoder().encode("object body"));
    return new TextDecoder().decode(await os.getBlob("o"));
  });

  // Stream features: JS_STREAM_CONSUMER_METADATA, JS_STREAM_FIRST_SEQ,
  // JS_STREAM_SUBJECT_TRANSFORM, JS_STREAM_COMPRESSION,
  // JS_DEFAULT_CONSUMER_LIMITS (2.10.0).
  r.stream = await attempt(async () => {
    const si = await jsm.streams.add({
      name: "GATES", subjects: ["in.>"], first_seq: 100, compression: "s2",
      subject_transform: { src: "in.*", dest: "gated.{{wildcard(1)}}" },
      metadata: { owner: "gates" },
      consumer_limits: { max_ack_pending: 7, inactive_threshold: 3_600_000_000_000 },
      allow_direct: true,
    });
    const ack = await js.publish("in.a", "one");
    await js.publish("in.b", "two");
    await js.publish("in.a", "three");
    await js.publish("in.c", "four");
    const got = stored(await jsm.streams.getMessage("GATES", { seq: 100 }));
    return {
      first_ack_seq: ack.seq, stored: got, compression: si.config.compression,
      metadata_owner: si.config.metadata?.owner, consumer_limits: si.config.consumer_limits,
      subject_transform: si.config.subject_transform,
    };
  });

  // Consumers: JS_NEW_CONSUMER_CREATE_API (a name with a filter),
  // JS_MULTIPLE_CONSUMER_FILTER, consumer metadata, the stream's
  // consumer_limits applied; JS_SIMPLIFICATION (js.consumers.get).
  r.consumer_named = await attempt(async () => {
    const ci = await jsm.consumers.add("GATES", { name: "named", filter_subject: "gated.b", ack_policy: AckPolicy.Explicit, metadata: { team: "x" } });
    const c = await js.consumers.get("GATES", "named");
    return { name: ci.name, max_ack_pending: ci.config.max_ack_pending, team: ci.config.metadata?.team, got: await fetchAll(c, { max_messages: 5, expires: 1000 }) };
  });
  r.consumer_filters = await attempt(async () => {
    const ci = await jsm.consumers.add("GATES", { durable_name: "multi", filter_subjects: ["gated.a", "gated.c"], ack_policy: AckPolicy.Explicit });
    const c = await js.consumers.get("GATES", "multi");
    return { filter_subjects: ci.config.filter_subjects, got: await fetchAll(c, { max_messages: 5, expires: 1000 }) };
  });

  // JS_STREAM_SOURCE_SUBJECT_TRANSFORM (2.10.0).
  r.source_transform = await attempt(async () => {
    // The origin has no consumer_limits: nats-server applies them to its
    // own source consumer too, whose ack policy none then fails them.
    await jsm.streams.add({ name: "GATES_ORIGIN", subjects: ["origin.>"] });
    for (const [s, d] of [["origin.a", "one"], ["origin.b", "two"], ["origin.a", "three"], ["origin.c", "four"]]) await js.publish(s, d);
    await jsm.streams.add({ name: "GATES_COPY", sources: [{ name: "GATES_ORIGIN", subject_transforms: [{ src: "origin.>", dest: "copied.>" }] }] });
    const ok = await eventually(async () => (await jsm.streams.info("GATES_COPY")).state.messages === 4);
    if (!ok) return "sourced messages did not arrive";
    return stored(await jsm.streams.getMessage("GATES_COPY", { seq: 1 }));
  });

  // JS_BATCH_DIRECT_GET (2.11.0): start_time, batch and multi_last.
  r.direct_start_time = await attempt(async () => stored(await jsm.direct.getMessage("GATES", { start_time: new Date(Date.now() - 3600_000) })));
  r.direct_batch = await attempt(() => collect(jsm.direct.getBatch("GATES", { seq: 101, batch: 2 })));
  r.direct_multi_last = await attempt(() => collect(jsm.direct.getLastMessagesFor("GATES", { multi_last: ["gated.a", "gated.b"] })));

  // JS_PRIORITY_GROUPS (2.11.0): overflow with min_pending, pinned client.
  r.priority_overflow = await attempt(async () => {
    const ci = await jsm.consumers.add("GATES", { durable_name: "over", ack_policy: AckPolicy.Explicit, priority_groups: ["g"], priority_policy: "overflow", deliver_policy: DeliverPolicy.All });
    const c = await js.consumers.get("GATES", "over");
    const below = await fetchAll(c, { max_messages: 4, expires: 1000, group: "g", min_pending: 10 });
    const above = await fetchAll(c, { max_messages: 4, expires: 1000, group: "g", min_pending: 1 });
    return { policy: ci.config.priority_policy, groups: ci.config.priority_groups, below_min_pending: below, above_min_pending: above };
  });
  r.priority_pinned = await attempt(async () => {
    await jsm.consumers.add("GATES", { durable_name: "pin", ack_policy: AckPolicy.Explicit, priority_groups: ["g"], priority_policy: "pinned_client", priority_timeout: 60_000_000_000 });
    const c = await js.consumers.get("GATES", "pin");
    const got = await fetchAll(c, { max_messages: 2, expires: 1000, group: "g" });
    const ci = await jsm.consumers.info("GATES", "pin");
    return { got, pinned: ci.priority_groups?.map((p) => ({ group: p.group, pinned: !!p.pinned_client_id })) };
  });
  return r;
});
