// Stream add, info, list, update and delete through the JetStream manager.
import { jetstreamManager } from "@nats-io/jetstream";
import { run, attempt } from "./lib.mjs";

run(async (nc) => {
  const jsm = await jetstreamManager(nc);
  const added = await jsm.streams.add({ name: "ADMIN", subjects: ["admin.>"], max_msgs: 100 });
  const info = await jsm.streams.info("ADMIN");
  const names = [];
  for await (const n of jsm.streams.names()) names.push(n);
  const listed = [];
  for await (const si of jsm.streams.list()) listed.push(si.config.name);
  const updated = await jsm.streams.update("ADMIN", { max_msgs: 50 });
  const overlap = await attempt(() => jsm.streams.add({ name: "ADMIN2", subjects: ["admin.x"] }));
  const badName = await attempt(() => jsm.streams.add({ name: "bad.name", subjects: ["bad"] }));
  const deleted = await jsm.streams.delete("ADMIN");
  const gone = await attempt(() => jsm.streams.info("ADMIN"));
  return {
    added: { config: added.config, state: added.state },
    info: { config: info.config, state: info.state },
    names: names.sort(), listed: listed.sort(),
    updated_max_msgs: updated.config.max_msgs,
    overlap, bad_name: badName, deleted, after_delete: gone,
  };
});
