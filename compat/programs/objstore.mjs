// Object store: an object larger than max_payload is chunked; put, get,
// info, list and delete.
import { Objm } from "@nats-io/obj";
import { run, attempt } from "./lib.mjs";

run(async (nc) => {
  const size = nc.info.max_payload * 2 + 12345;
  const data = new Uint8Array(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + 7) & 0xff;
  const objm = new Objm(nc);
  const os = await objm.create("files");
  const view = (oi) => oi && { name: oi.name, size: oi.size, chunks: oi.chunks, digest: oi.digest, deleted: oi.deleted, bucket: oi.bucket };
  const r = { max_payload: nc.info.max_payload };
  r.put = view(await os.putBlob({ name: "big.bin", description: "big" }, data));
  r.put_small = view(await os.putBlob({ name: "small.txt" }, new TextEncoder().encode("hello")));
  const back = await os.getBlob("big.bin");
  r.get_equal = back !== null && back.length === data.length && back.every((b, i) => b === data[i]);
  r.info = view(await os.info("big.bin"));
  r.list = (await os.list()).map(view).sort((a, b) => a.name.localeCompare(b.name));
  r.delete = await os.delete("big.bin");
  r.after_delete = await attempt(() => os.getBlob("big.bin"));
  r.status = await attempt(async () => { const s = await os.status(); return { bucket: s.bucket, size: s.size, sealed: s.sealed }; });
  return r;
});
