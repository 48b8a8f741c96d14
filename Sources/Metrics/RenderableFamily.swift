/// What the registry needs from every kind of family to write the exposition text.
protocol RenderableFamily: AnyObject, Sendable {
    var name: String { get }
    var labelNames: [String] { get }
    func render(into text: inout String)
}
