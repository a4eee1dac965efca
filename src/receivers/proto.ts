/**
 * The protobuf message types the receivers decode and encode, loaded by protobufjs from
 * the official schema files:
 * - OpenTelemetry's `opentelemetry/proto/collector/metrics/v1/metrics_service.proto`
 *   (opentelemetry-proto, as the npm package `@platformatic/promotel` ships it);
 * - Prometheus' remote-write `prometheus.proto` and `types.proto` (`prompb`, same package);
 * - `google.rpc.Status`, the error body of OTLP/HTTP (its two fields we send, from
 *   googleapis' `google/rpc/status.proto`; the `details` field is never sent).
 * Loaded once, on first use (a few milliseconds).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);

/** The message types of both receivers. */
export interface ReceiverTypes {
  /** `opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest`. */
  exportRequest: protobuf.Type;
  /** `opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse`. */
  exportResponse: protobuf.Type;
  /** `google.rpc.Status`. */
  status: protobuf.Type;
  /** `prometheus.WriteRequest` (remote write 1.0). */
  writeRequest: protobuf.Type;
}

let types: ReceiverTypes | undefined;

/** The directory holding the `.proto` files of `@platformatic/promotel` (its `proto/`, beside its `dist/`). */
function protoDirectory(): string {
  return join(dirname(require.resolve('@platformatic/promotel')), '..', 'proto');
}

/**
 * The message types, loaded on first call.
 * @throws Error when a schema file is missing (a broken install).
 */
export function receiverTypes(): ReceiverTypes {
  if (types !== undefined) return types;
  const directory = protoDirectory();
  const root = new protobuf.Root();
  // Imports are relative to the package's proto directory; gogo.proto's import of
  // descriptor.proto comes with protobufjs itself.
  root.resolvePath = (_origin, target) =>
    target.startsWith('google/protobuf/') ? require.resolve(`protobufjs/${target}`) : join(directory, target);
  root.loadSync(['opentelemetry/proto/collector/metrics/v1/metrics_service.proto', 'prometheus.proto']);
  root.add(
    protobuf.Namespace.fromJSON('google.rpc', {
      nested: { Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } } } },
    }),
  );
  root.resolveAll();
  types = {
    exportRequest: root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest'),
    exportResponse: root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse'),
    status: root.lookupType('google.rpc.Status'),
    writeRequest: root.lookupType('prometheus.WriteRequest'),
  };
  return types;
}
