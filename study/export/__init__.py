"""Writers of collected data in dataset formats."""
