/**
 * The object store on an S3 bucket (the batch bucket when deployed). Reads stream the object's
 * body; listings follow continuation tokens; a missing object reads as undefined.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { checkObjectKey, type ObjectStore, type StoredObject } from "../domain/object-store.ts";

/** An object store on one bucket. */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
  ) {}

  async put(key: string, body: string | Uint8Array): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: checkObjectKey(key), Body: body }),
    );
  }

  async read(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    try {
      const output = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: checkObjectKey(key) }),
      );
      return output.Body as AsyncIterable<Uint8Array> | undefined;
    } catch (error) {
      if ((error as { name?: string }).name === "NoSuchKey") return undefined;
      throw error;
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? [])
        if (object.Key) out.push({ key: object.Key, bytes: object.Size ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkObjectKey(key) }));
  }
}
