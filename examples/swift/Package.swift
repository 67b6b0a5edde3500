// swift-tools-version:5.9
// lume-metal for Swift: the C library (liblume-metal) as Lume would call it.
//
// The C side is the installed library, found through pkg-config (`lume-metal`, PKG_CONFIG_PATH
// naming <prefix>/lib/pkgconfig). Its Cflags put <prefix>/include/lume-metal-swift on the include
// path, where the project's own module map declares `LumeMetal` (and `LumeMetal.Sys`): the
// wrapper imports that module, so a wrong module map or a header left out of its umbrella fails
// this package's build (docs/embedding.md, "Swift").
//
//   swift build -Xlinker -rpath -Xlinker "$(pkg-config --variable=libdir lume-metal)"
//   swift test  (the tests need the project's Lume simulator: tests/swift/swift_package.sh)
import PackageDescription

let package = Package(
    name: "LumeMetalSwift",
    products: [
        // What Lume links: the Swift API over the C library.
        .library(name: "LumeMetalKit", targets: ["LumeMetalKit"]),
    ],
    targets: [
        // The system library: nothing of its own but pkg-config's flags for those that depend on
        // it (SwiftPM reads lume-metal.pc itself); the C module is the installed module map's.
        .systemLibrary(
            name: "CLumeMetal",
            pkgConfig: "lume-metal",
            providers: [.brew(["lume-metal"])]
        ),
        .target(name: "LumeMetalKit", dependencies: ["CLumeMetal"]),
        // What Lume's side would look like: a `lume run --metal-unlock` hook and a
        // `lume metal rollback` command over LumeMetalKit. It compiles here; it cannot run Lume.
        .target(name: "LumeSide", dependencies: ["LumeMetalKit"]),
        .testTarget(name: "LumeMetalKitTests", dependencies: ["LumeMetalKit", "LumeSide"]),
    ]
)
