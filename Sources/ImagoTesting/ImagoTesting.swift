import ImagoCore

/// Test doubles and tools shipped as a product, like swift-nio's NIOEmbedded: a loopback HTTP server with fault
/// injection, counting and suspendable mocks, image factories.
public enum ImagoTesting {}
