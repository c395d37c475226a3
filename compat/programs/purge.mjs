// Stream purge: all, by subject filter, keep, and up to a sequence.
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "PURGE", subjects: ["purge.>"] });
  const js = jetstream(nc);
  for (let i = 1; i <= 30; i++) await js.publish(`purge.${["a", "b", "c"][i % 3]}`, `m${i}`);
  const r = {};
  const state = async () => { const s = (await jsm.streams.info("PURGE")).state; return { messages: s.messages, first_seq: s.first_seq, last_seq: s.last_seq, num_deleted: s.num_deleted }; };
  r.filter = await jsm.streams.purge("PURGE", { filter: "purge.a" });
  r.after_filter = await state();
  r.filter_keep = await jsm.streams.purge("PURGE", { filter: "purge.b", keep: 2 });
  r.after_filter_keep = await state();
  r.seq = await jsm.streams.purge("PURGE", { seq: 20 });
  r.after_seq = await state();
  r.keep = await jsm.streams.purge("PURGE", { keep: 1 });
  r.after_keep = await state();
  r.all = await jsm.streams.purge("PURGE");
  r.after_all = await state();
  r.bad = await attempt(() => jsm.streams.purge("PURGE", { seq: 5, keep: 1 }));
  return r;
});
