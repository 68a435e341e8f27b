import ArgumentParser
import InspectorCore
import InspectorIngest
import OTLPReceiver
import WireProtocol

/// The `otlp:` side of `--listen`: an OpenTelemetry receiver beside the
/// agents' listener, feeding the same inbox.
extension Netinspect {
    /// The receiver the `otlp:` addresses, `--token` and `--tls-*` describe;
    /// nil when no `otlp:` address was given.
    var otlpConfiguration: OTLPReceiverConfiguration? {
        get throws {
            let endpoints = try listen.compactMap { text in
                do {
                    return try OTLPReceiverConfiguration.endpoint(parsing: text)
                } catch {
                    throw ValidationError("--listen '\(text)': expected otlp:HOST:PORT, a port from 0 to 65535")
                }
            }
            guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
            guard !endpoints.isEmpty else {
                if tlsCert != nil { throw ValidationError("--tls-cert is for otlp: addresses; give --listen otlp:HOST:PORT") }
                return nil
            }
            let tls = tlsCert.map { OTLPReceiverConfiguration.TLSFiles(certificatePath: $0, privateKeyPath: tlsKey ?? "") }
            return OTLPReceiverConfiguration(endpoints: endpoints, token: token, tls: tls)
        }
    }

    /// Starts the OTLP receiver when `otlp:` addresses were given.
    func startOTLPReceiver(inbox: Inbox) throws -> OTLPReceiver? {
        guard let configuration = try otlpConfiguration else { return nil }
        let receiver = OTLPReceiver(configuration: configuration, inbox: inbox)
        _ = try receiver.start()
        return receiver
    }
}
