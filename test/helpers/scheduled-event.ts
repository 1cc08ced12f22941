/** The EventBridge event a schedule rule sends to a daily function. */

/** A "Scheduled Event" at `time` (ISO), as EventBridge delivers it. */
export function scheduledEvent(time: string) {
  return {
    version: "0",
    id: "1",
    "detail-type": "Scheduled Event",
    source: "aws.events",
    account: "123456789012",
    time,
    region: "us-east-1",
    resources: [],
    detail: {},
  };
}
