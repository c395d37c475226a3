// Direct get: by sequence, last by subject, next by subject, missing.
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

const view = (m) => m && { seq: m.seq, subject: m.subject, data: m.string() };

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "DIRECT", subjects: ["direct.>"], allow_direct: true });
  const js = jetstream(nc);
  for (let i = 1; i <= 6; i++) await js.publish(`direct.${i % 2 ? "odd" : "even"}`, `m${i}`);
  const r = {};
  r.by_seq = view(await jsm.direct.getMessage("DIRECT", { seq: 3 }));
  r.last_by_subj = view(await jsm.direct.getMessage("DIRECT", { last_by_subj: "direct.odd" }));
  r.next_by_subj = view(await jsm.direct.getMessage("DIRECT", { seq: 2, next_by_subj: "direct.odd" }));
  r.missing = await attempt(async () => view(await jsm.direct.getMessage("DIRECT", { seq: 99 })));
  r.stream_get = view(await jsm.streams.getMessage("DIRECT", { seq: 4 }));
  return r;
});
