// Core NATS: subscribe and publish, request-reply, a request nobody answers.
import { run, attempt, te, td } from "./lib.mjs";

run(async (nc) => {
  const got = [];
  const sub = nc.subscribe("compat.core.>", { max: 3 });
  const done = (async () => {
    for await (const m of sub) got.push({ subject: m.subject, data: m.string() });
  })();
  const svc = nc.subscribe("compat.svc.echo");
  (async () => {
    for await (const m of svc) m.respond(te.encode("echo:" + m.string()));
  })();
  for (let i = 0; i < 3; i++) nc.publish(`compat.core.${i}`, te.encode(`m${i}`));
  await done;
  const reply = await nc.request("compat.svc.echo", te.encode("hi"), { timeout: 5000 });
  const none = await attempt(() => nc.request("compat.nobody", te.encode("x"), { timeout: 5000 }));
  svc.unsubscribe();
  return { received: got, reply: td.decode(reply.data), no_responders: none };
});
