/**
 * The object stores against their contract: a folder (the local mode's bucket), and S3 through
 * the AWS SDK against moto's S3 server on loopback (skipping visibly where moto is absent).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll } from "vitest";
import { localServiceOptions, s3Client } from "../../shared/adapters/aws-clients.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { S3ObjectStore } from "../../shared/adapters/s3-object-store.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { objectStoreContract } from "../helpers/object-store.contract.ts";

const root = await mkdtemp(join(tmpdir(), "object-store-"));
objectStoreContract("folder", () => new FsObjectStore(root));

const motoAvailable = spawnSync("moto_server", ["--help"]).status === 0;
if (!motoAvailable)
  console.warn(
    "SKIP: moto_server is absent (pip install 'moto[server]'), so the S3 object store is not tested",
  );

let moto: ChildProcess | undefined;
let client: S3Client | undefined;

beforeAll(async () => {
  if (!motoAvailable) return;
  const port = await freePort();
  moto = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
  client = s3Client(localServiceOptions(`http://127.0.0.1:${port}`));
  // Wait for moto to answer (it takes a second or two to start), failing on lack of progress.
  for (let attempt = 0; ; attempt++) {
    try {
      await client.send(new CreateBucketCommand({ Bucket: "batches" }));
      return;
    } catch (error) {
      if (attempt >= 60 || moto.exitCode !== null)
        throw new Error(`moto_server did not start: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}, 60_000);

afterAll(() => {
  client?.destroy();
  moto?.kill();
});

if (motoAvailable) objectStoreContract("S3 on moto", () => new S3ObjectStore(client!, "batches"));
