include inc-child
hostname parent
