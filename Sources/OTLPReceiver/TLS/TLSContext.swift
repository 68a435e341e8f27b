import COpenSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system OpenSSL's server context for `--tls-cert` and `--tls-key`:
/// the PEM certificate chain (leaf first) and its private key, TLS 1.2 and
/// 1.3 only, renegotiation refused. Made once when the receiver starts, so
/// a file that cannot be used is an error then, not at the first client.
///
/// ```swift
/// let context = try TLSContext(files: .init(certificatePath: "cert.pem", privateKeyPath: "key.pem"))
/// try channel.pipeline.syncOperations.addHandler(TLSServerHandler(context: context))
/// ```
final class TLSContext: @unchecked Sendable {
    // Sendable: once configured, an SSL_CTX is only read, and OpenSSL makes
    // connections from one context on any thread (each loop makes its own).
    private let context: OpaquePointer

    /// - Throws: ``TLSFilesError`` naming the files and OpenSSL's reason.
    init(files: OTLPReceiverConfiguration.TLSFiles) throws(TLSFilesError) {
        func failure(_ what: String) -> TLSFilesError {
            TLSFilesError(description: "cannot serve TLS with \(files.certificatePath) and \(files.privateKeyPath): \(what): \(Self.takeErrors())")
        }
        ERR_clear_error()
        guard let method = TLS_server_method(), let context = SSL_CTX_new(method) else { throw failure("no TLS context") }
        guard netinspect_ssl_ctx_set_min_tls12(context) == 1 else {
            SSL_CTX_free(context)
            throw failure("TLS 1.2 cannot be required")
        }
        netinspect_ssl_ctx_refuse_renegotiation(context)
        guard SSL_CTX_use_certificate_chain_file(context, files.certificatePath) == 1 else {
            SSL_CTX_free(context)
            throw failure("the certificate chain")
        }
        // OpenSSL checks here that the key belongs to the certificate set above.
        guard SSL_CTX_use_PrivateKey_file(context, files.privateKeyPath, netinspect_ssl_filetype_pem()) == 1 else {
            SSL_CTX_free(context)
            throw failure("the private key")
        }
        self.context = context
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A connection's OpenSSL object, or nil when OpenSSL has no memory for it.
    func makeConnection() -> OpaquePointer? {
        SSL_new(context)
    }

    /// OpenSSL's reasons for the last failure on this thread, oldest first,
    /// and an empty queue after.
    static func takeErrors() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            let systemError = netinspect_err_system_errno(code)
            let reason = systemError != 0 ? String(cString: strerror(systemError))
                : ERR_reason_error_string(code).map { String(cString: $0) } ?? "OpenSSL error \(code)"
            if !reasons.contains(reason) { reasons.append(reason) }
        }
        return reasons.isEmpty ? "no reason given" : reasons.joined(separator: ", ")
    }
}
