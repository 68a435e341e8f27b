import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import XCTest
@testable import CaptureAgent
// The server is built with the AsyncHTTPClient trait (on by default), whose
// tests are its only clients, and so are swift-nio-ssl and swift-nio-http2
// for this target (Package.swift). The gRPC tests use the certificate alone.
#if AsyncHTTPClient
import NIOHTTP2
import NIOSSL
#endif

/// ``TestHTTPServer``'s routes over TLS on 127.0.0.1, speaking HTTP/2 or
/// HTTP/1.1 as ALPN settles it (or HTTP/1.1 only), with the same recording
/// of what arrived.
///
/// The certificate is a self-signed P-256 one for `127.0.0.1` and
/// `localhost`, valid until 2126, made once with
/// `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
/// -subj "/CN=netinspect test" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"`.
/// It protects nothing: clients in the tests trust it as their only root.
final class TLSTestServer: @unchecked Sendable {
    static let certificatePEM = """
-----BEGIN CERTIFICATE-----
MIIBpDCCAUqgAwIBAgIULc3br5rrepIjh+RKJoC4hjD89UAwCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPbmV0aW5zcGVjdCB0ZXN0MCAXDTI2MTEyNDE0MjgwMVoYDzIx
MjYxMDMxMTQyODAxWjAaMRgwFgYDVQQDDA9uZXRpbnNwZWN0IHRlc3QwWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAASihlQPXuTcKo10vNXitp++ESHnWTArpLu4RiUi
2dhv+/pKC9FvbrgXn7114Igo0jQxbCb8oI76vOsLknzva7sxo2wwajAdBgNVHQ4E
FgQU0LWWefrMoMmHsBqAPMQvwG3MUiYwHwYDVR0jBBgwFoAU0LWWefrMoMmHsBqA
PMQvwG3MUiYwGgYDVR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MAwGA1UdEwEB/wQC
MAAwCgYIKoZIzj0EAwIDSAAwRQIhAP94PkWRWr3icxBSR3h2xfds8RFIQkee82OZ
2n/ZqFx8AiAVbw2kim4lK8AcQlYNt3atfAWT85IP34XpgiEPRfS1sw==
-----END CERTIFICATE-----
"""
    static let privateKeyPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgDSSZn/GZHnvB1dLA
YweDrvxFEgcGbkrl+QYsH1KGZ+uhRANCAASihlQPXuTcKo10vNXitp++ESHnWTAr
pLu4RiUi2dhv+/pKC9FvbrgXn7114Igo0jQxbCb8oI76vOsLknzva7sx
-----END PRIVATE KEY-----
"""

    #if AsyncHTTPClient
    private let channel: Channel
    private let received = Locked<[ReceivedRequest]>([])
    private let counters = ServerCounters()
    let port: Int

    static var certificate: NIOSSLCertificate {
        try! NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)
    }

    init(http2: Bool) throws {
        let box = received, counters = counters
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(Self.certificate)],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(Self.privateKeyPEM.utf8), format: .pem))
        )
        tls.applicationProtocols = http2 ? ["h2", "http/1.1"] : ["http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let record: @Sendable (ReceivedRequest) -> Void = { request in box.withLock { $0.append(request) } }
        channel = try ServerBootstrap(group: TestHTTPServer.group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            channel.configureHTTP2Pipeline(mode: .server) { stream in
                                stream.eventLoop.makeCompletedFuture {
                                    try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                                    try stream.pipeline.syncOperations.addHandler(RecordingHandler(counters: counters, record: record))
                                }
                            }.map { _ in }
                        },
                        http1ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                                try channel.pipeline.syncOperations.addHandler(RecordingHandler(counters: counters, record: record))
                            }
                        }
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel.close().wait()
    }

    func url(_ path: String) -> String {
        "https://127.0.0.1:\(port)\(path)"
    }

    /// Takes what was received once no request is part way in (as
    /// ``TestHTTPServer/takeRequestsOnceArrived()``).
    func takeRequestsOnceArrived() -> [ReceivedRequest] {
        XCTAssertTrue(eventually { counters.arriving.current == 0 }, "a request is still arriving at the TLS server")
        return takeRequests()
    }

    func takeRequests() -> [ReceivedRequest] {
        received.withLock { all in
            defer { all = [] }
            return all
        }
    }
    #endif
}
