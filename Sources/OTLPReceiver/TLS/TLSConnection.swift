import COpenSSL
import NIOCore

/// One TLS connection's OpenSSL state with no socket of its own: ciphertext
/// goes in and comes out through two memory BIOs, plaintext through
/// `SSL_read` and `SSL_write`. The channel handler moves the bytes; this
/// only talks to OpenSSL.
///
/// ```
///  network ──feed──▶ [read BIO] ──▶ SSL ──read──▶ plaintext in
///  network ◀─takeCiphertext── [write BIO] ◀── SSL ◀──write── plaintext out
/// ```
///
/// ```swift
/// connection.feed(bytes)
/// if case .finished = connection.handshake() { … }
/// let out = connection.takeCiphertext(allocator: allocator)
/// ```
final class TLSConnection {
    /// How a step of the handshake went.
    enum HandshakeStep: Equatable {
        case finished
        /// More bytes from the client are needed.
        case needsMoreInput
        /// The handshake cannot succeed; OpenSSL's reason.
        case failed(String)
    }

    /// What reading plaintext ended with.
    enum ReadEnd: Equatable {
        /// Everything fed so far has been read.
        case needsMoreInput
        /// The client sent `close_notify`.
        case closedByPeer
        case failed(String)
    }

    private let ssl: OpaquePointer
    private let networkIn: OpaquePointer
    private let networkOut: OpaquePointer
    private var shutdownSent = false

    /// Nil when OpenSSL has no memory for the connection.
    init?(context: TLSContext) {
        guard let ssl = context.makeConnection() else { return nil }
        guard let networkIn = BIO_new(BIO_s_mem()), let networkOut = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            return nil
        }
        // The SSL object owns both BIOs from here and frees them with itself.
        SSL_set_bio(ssl, networkIn, networkOut)
        SSL_set_accept_state(ssl)
        self.ssl = ssl
        self.networkIn = networkIn
        self.networkOut = networkOut
    }

    deinit {
        SSL_free(ssl)
    }

    /// Ciphertext from the client. A memory BIO grows to take it all.
    func feed(_ bytes: ByteBuffer) {
        bytes.withUnsafeReadableBytes { pointer in
            guard let base = pointer.baseAddress, !pointer.isEmpty else { return }
            _ = BIO_write(networkIn, base, Int32(pointer.count))
        }
    }

    /// Takes the handshake as far as the bytes fed allow.
    func handshake() -> HandshakeStep {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .finished }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .needsMoreInput
        default: return .failed(TLSContext.takeErrors())
        }
    }

    /// Decrypts what has been fed into `into`, chunk by chunk, until more
    /// input is needed or the stream ends.
    func readPlaintext(allocator: ByteBufferAllocator, into chunks: inout [ByteBuffer]) -> ReadEnd {
        while true {
            ERR_clear_error()
            var chunk = allocator.buffer(capacity: 16 * 1024)
            var result: Int32 = 0
            chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: 16 * 1024) { pointer in
                result = SSL_read(ssl, pointer.baseAddress, Int32(pointer.count))
                return max(0, Int(result))
            }
            if result > 0 {
                chunks.append(chunk)
                continue
            }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ: return .needsMoreInput
            case SSL_ERROR_ZERO_RETURN: return .closedByPeer
            default: return .failed(TLSContext.takeErrors())
            }
        }
    }

    /// Encrypts `plaintext`; its records wait in ``takeCiphertext(allocator:)``.
    /// - Returns: false when OpenSSL refused (the connection is broken).
    func write(_ plaintext: ByteBuffer) -> Bool {
        plaintext.withUnsafeReadableBytes { pointer in
            guard let base = pointer.baseAddress, !pointer.isEmpty else { return true }
            ERR_clear_error()
            // A memory BIO never blocks, so one call writes it all or fails.
            return SSL_write(ssl, base, Int32(pointer.count)) == Int32(pointer.count)
        }
    }

    /// Queues this side's `close_notify`, once.
    func shutdown() {
        guard !shutdownSent else { return }
        shutdownSent = true
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
    }

    /// The ciphertext OpenSSL has written for the client, if any.
    func takeCiphertext(allocator: ByteBufferAllocator) -> ByteBuffer? {
        let pending = BIO_ctrl_pending(networkOut)
        guard pending > 0 else { return nil }
        var buffer = allocator.buffer(capacity: pending)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: pending) { pointer in
            max(0, Int(BIO_read(networkOut, pointer.baseAddress, Int32(pending))))
        }
        return buffer
    }
}
