"""Where work runs, whatever it is: the executor seam, the local worker pool and Ray
(``sim2human.experiments`` says which module is which)."""
