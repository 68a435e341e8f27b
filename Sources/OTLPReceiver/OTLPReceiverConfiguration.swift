import InspectorIngest
import WireProtocol

/// Where and how ``OTLPReceiver`` accepts OpenTelemetry exports.
///
/// ```swift
/// var configuration = OTLPReceiverConfiguration(addresses: [(host: "0.0.0.0", port: 4318)], token: "s3cret")
/// configuration.tls = .init(certificatePath: "cert.pem", privateKeyPath: "key.pem")
/// try configuration.validate()
/// ```
package struct OTLPReceiverConfiguration: Sendable {
    /// PEM files to serve TLS with.
    package struct TLSFiles: Sendable, Equatable {
        /// The certificate chain, leaf first.
        package var certificatePath: String
        /// The certificate's private key.
        package var privateKeyPath: String

        /// Names the two files.
        package init(certificatePath: String, privateKeyPath: String) {
            self.certificatePath = certificatePath
            self.privateKeyPath = privateKeyPath
        }
    }

    /// TCP addresses to listen on (OTLP/HTTP's usual port is 4318).
    package var endpoints: [Endpoint]
    /// The secret every request must carry as `Authorization: Bearer …`;
    /// required for any non-loopback address.
    package var token: String?
    /// Serve HTTPS with these files instead of plain HTTP.
    package var tls: TLSFiles?
    /// The largest request body, after decompression, in bytes; larger gets 413.
    package var maximumBodySize = 16 << 20

    /// Creates a configuration for `tcp:` endpoints.
    package init(endpoints: [Endpoint], token: String? = nil, tls: TLSFiles? = nil) {
        self.endpoints = endpoints
        self.token = token
        self.tls = tls
    }

    /// Creates a configuration from host and port pairs.
    package init(addresses: [(host: String, port: Int)], token: String? = nil) {
        self.init(endpoints: addresses.map { Endpoint.tcp(host: $0.host, port: $0.port) }, token: token)
    }

    /// Parses the address of `--listen otlp:HOST:PORT` (the part after `otlp:`
    /// reads like a `tcp:` endpoint).
    /// - Returns: nil when `text` does not start with `otlp:`.
    package static func endpoint(parsing text: String) throws(Endpoint.ParseError) -> Endpoint? {
        guard text.hasPrefix("otlp:") else { return nil }
        return try Endpoint(parsing: "tcp:" + text.dropFirst("otlp:".count))
    }

    /// Checks the configuration before anything is bound.
    /// - Throws: ``ListenerError/tokenRequired(_:)`` for an address off this machine without a token.
    package func validate() throws(ListenerError) {
        for endpoint in endpoints {
            if case .tcp(let host, _) = endpoint, !Endpoint.isLoopback(host: host), (token ?? "").isEmpty {
                throw .tokenRequired(endpoint)
            }
        }
    }
}
