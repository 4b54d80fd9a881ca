//! weft-core: fabric topology, generalised coordinates and materials.
