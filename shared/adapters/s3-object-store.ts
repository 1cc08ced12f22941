/**
 * The object store on an S3 bucket (the batch bucket when deployed). Reads stream the object's
 * body; a streamed write is a multipart upload of `OBJECT_PART_BYTES` parts (one in memory at a
 * time; one PutObject when the whole body fits in a part; aborted when the body throws, so no
 * half object appears and no orphaned parts are billed); listings follow continuation tokens; a
 * missing object reads as undefined.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { checkObjectKey, type ObjectStore, type StoredObject } from "../domain/object-store.ts";
import { OBJECT_PART_BYTES } from "../domain/topology.ts";

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

  async putStream(key: string, body: AsyncIterable<string | Uint8Array>): Promise<void> {
    const Key = checkObjectKey(key);
    let pending: Buffer[] = [];
    let size = 0;
    let uploadId: string | undefined;
    const parts: { ETag: string; PartNumber: number }[] = [];
    const upload = async () => {
      uploadId ??= (await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key })))
        .UploadId!;
      const PartNumber = parts.length + 1;
      const output = await this.client.send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key,
          UploadId: uploadId,
          PartNumber,
          Body: Buffer.concat(pending),
        }),
      );
      parts.push({ ETag: output.ETag!, PartNumber });
      pending = [];
      size = 0;
    };
    try {
      for await (const piece of body) {
        const bytes =
          typeof piece === "string"
            ? Buffer.from(piece)
            : Buffer.from(piece.buffer, piece.byteOffset, piece.length);
        pending.push(bytes);
        size += bytes.length;
        if (size >= OBJECT_PART_BYTES) await upload();
      }
      if (uploadId === undefined) return await this.put(key, Buffer.concat(pending));
      if (size > 0) await upload();
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (error) {
      if (uploadId !== undefined)
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId }))
          .catch(() => undefined); // the bucket's lifecycle rule removes what an abort leaves
      throw error;
    }
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
