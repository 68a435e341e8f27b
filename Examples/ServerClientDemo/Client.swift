// Built with the OpenAPI trait (on by default; Package.swift).
#if OpenAPI
import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime

/// A small stand-in for what swift-openapi-generator makes from a document
/// with one operation, `getRoot` (`GET /`, a text body): the same initializer
/// and the same call into the runtime, so the demo needs no generator plugin.
struct Client {
    private let client: UniversalClient

    init(serverURL: URL, configuration: Configuration = .init(), transport: any ClientTransport, middlewares: [any ClientMiddleware] = []) {
        client = UniversalClient(serverURL: serverURL, configuration: configuration, transport: transport, middlewares: middlewares)
    }

    /// `GET /`: the body as text.
    func getRoot() async throws -> String {
        try await client.send(
            input: (),
            forOperation: "getRoot",
            serializer: { _ in
                var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/")
                request.headerFields[.accept] = "text/plain, */*"
                return (request, nil)
            },
            deserializer: { response, body in
                guard let body else { return "" }
                return try await String(collecting: body, upTo: 1 << 20)
            }
        )
    }
}
#endif
