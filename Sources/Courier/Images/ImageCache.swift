import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A store of images by identifier (AFNetworking's `AFImageCache`).
public protocol ImageCache: Sendable {
    /// Stores `image` under `identifier`, replacing any image there.
    func add(_ image: Image, withIdentifier identifier: String)
    /// Removes the image under `identifier`; `true` when there was one.
    @discardableResult func removeImage(withIdentifier identifier: String) -> Bool
    /// Removes every image; `true` when there was any.
    @discardableResult func removeAllImages() -> Bool
    /// The image under `identifier`, if any.
    func image(withIdentifier identifier: String) -> Image?
}

/// An ``ImageCache`` that also stores images by the request that fetched them (AFNetworking's
/// `AFImageRequestCache`), with an optional additional identifier (a filter's name, a size).
public protocol ImageRequestCache: ImageCache {
    /// Whether the downloader should store `image`, fetched with `request`.
    func shouldCache(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool
    /// Stores `image` for `request` and `identifier`.
    func add(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?)
    /// Removes the image for `request` and `identifier`; `true` when there was one.
    @discardableResult func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool
    /// The image for `request` and `identifier`, if any.
    func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Image?
}

extension ImageRequestCache {
    /// Every image is cached.
    public func shouldCache(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?)
        -> Bool
    { true }

    /// Stores under ``ImageCacheKey/identifier(for:withAdditionalIdentifier:)``.
    public func add(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) {
        add(image, withIdentifier: ImageCacheKey.identifier(for: request, withAdditionalIdentifier: identifier))
    }

    /// Removes the image under ``ImageCacheKey/identifier(for:withAdditionalIdentifier:)``.
    @discardableResult public func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?)
        -> Bool
    {
        removeImage(withIdentifier: ImageCacheKey.identifier(for: request, withAdditionalIdentifier: identifier))
    }

    /// The image under ``ImageCacheKey/identifier(for:withAdditionalIdentifier:)``.
    public func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Image? {
        image(withIdentifier: ImageCacheKey.identifier(for: request, withAdditionalIdentifier: identifier))
    }
}

/// How an ``ImageRequestCache`` names the image of a request.
public enum ImageCacheKey {
    /// The identifier an image fetched with `request` is stored under: the URL's absolute string, then, when there
    /// is an additional identifier, a NUL and that identifier.
    ///
    /// AFNetworking concatenated the two, so `http://a/b` with `c` and `http://a/bc` with none shared a key. A URL
    /// never contains a NUL (it would be percent-encoded), so the first NUL marks where the URL ends and no two
    /// pairs share a key; no identifier and an empty one differ too. A request without a URL has the key `""`.
    public static func identifier(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> String {
        let url = request.url?.absoluteString ?? ""
        guard let identifier else { return url }
        return url + "\u{0}" + identifier
    }
}
